import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEvaluator, createLlmConnection, createProject, createTeam, recordJudgmentAttempt, sql, takeNewTraces, type Db, type EvaluatorDto } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { derivedIds, type ChatAnswer } from '@tracewell/llm-calls'
import { summariseAll } from '@tracewell/write-path'
import { recordJudgeSpend } from '../src/judge-spend.ts'
import type { JudgeCallRecord } from '../src/judge.client.ts'

// What a judgment's calls cost is counted whatever became of them (issue 48 §6): every request of
// every attempt a span of the project, its tokens and cost added to the judgment's row, once.

const answer = (text: string): ChatAnswer => ({
  text, toolCalls: [], finishReason: 'stop', model: 'gpt-4o-mini-2024-07-18',
  inputTokens: 120, outputTokens: 20, cachedInputTokens: null, reasoningTokens: null, latencyMs: 40, firstTokenMs: null,
})
const messages = [{ role: 'system' as const, content: 'Judge.' }, { role: 'user' as const, content: 'Answer: Paris.' }]

describe('a judgment’s spend', () => {
  let db: Db
  let drop: () => Promise<void>
  let projectId: string
  let evaluator: EvaluatorDto
  let jobId: string
  const judgedTrace = 'ab'.repeat(16)
  const row = async () =>
    (await sql<{ input_tokens: number | null; output_tokens: number | null; cost_usd: string | null }>`select input_tokens, output_tokens, cost_usd from evaluation_jobs where id = ${jobId}`.execute(db)).rows[0]
  const judgeSpans = async () =>
    (await sql<{ span_id: string; trace_id: string; status_code: number; input_tokens: string | null; origin: unknown; attempt: unknown }>`
      select span_id, trace_id, status_code, input_tokens, attributes->'tracewell.origin' as origin, attributes->'tracewell.judgment.attempt' as attempt
      from spans where project_id = ${projectId} and service_name = 'tracewell' order by start_time, span_id`.execute(db)).rows

  before(async () => {
    ;({ db, drop } = await createTestDatabase())
    const team = await createTeam(db, { name: 't' })
    projectId = (await createProject(db, { teamId: team.id, name: 'p' })).id
    const connectionId = (await createLlmConnection(db, { projectId, name: 'c', provider: 'openai', baseUrl: 'http://judge', apiKeySealed: 'v1:x', apiKeyHint: '…' })).id
    evaluator = await createEvaluator(db, { projectId, name: 'capital check', connectionId, model: 'gpt-4o-mini', prompt: '{{output}}', promptRef: null, scoreName: 's', filter: {}, samplingRate: 1 })
    const { rows } = await sql<{ id: string }>`insert into evaluation_jobs (project_id, evaluator_id, trace_id, status) values (${projectId}, ${evaluator.id}, ${judgedTrace}, 'pending') returning id`.execute(db)
    jobId = rows[0]?.id as string
  })
  after(() => drop())

  it('stores every call of a failed attempt as a judge span and adds its usage to the row, once however often it is recorded', async () => {
    assert.equal(await recordJudgmentAttempt(db, jobId), 1)
    const startedAtMs = Date.now() - 1_000
    const calls: JudgeCallRecord[] = [
      { startedAtMs, messages, answer: null, error: 'the judge answered 400: response_format json_schema is not supported' },
      { startedAtMs: startedAtMs + 50, messages, answer: answer('I would rather not say.'), error: 'the judge\'s answer is not JSON: "I would rather not say."' },
    ]
    const attempt = { jobId, attempt: 1, evaluator, traceId: judgedTrace }
    await recordJudgeSpend(db, attempt, calls)
    const first = await row()
    assert.deepEqual([first?.input_tokens, first?.output_tokens], [120, 20])
    assert.ok(Number(first?.cost_usd) > 0, String(first?.cost_usd))
    // A redelivered attempt records the same calls again: nothing is stored or counted twice.
    await recordJudgeSpend(db, attempt, calls)
    assert.deepEqual(await row(), first)
    const spans = await judgeSpans()
    const { traceId } = derivedIds(`judgment:${jobId}`)
    assert.deepEqual(spans.map((span) => [span.trace_id, span.status_code, span.input_tokens, span.origin, span.attempt]), [
      [traceId, 2, null, { stringValue: 'judge' }, { intValue: '1' }],
      [traceId, 2, '120', { stringValue: 'judge' }, { intValue: '1' }],
    ])
  })

  it('adds the next attempt’s calls to the same judgment, as spans of the same trace', async () => {
    const before = await row()
    assert.equal(await recordJudgmentAttempt(db, jobId), 2)
    await recordJudgeSpend(db, { jobId, attempt: 2, evaluator, traceId: judgedTrace }, [{ startedAtMs: Date.now(), messages, answer: answer('{"score": 1, "reasoning": "Paris."}'), error: null }])
    const after = await row()
    assert.deepEqual([after?.input_tokens, after?.output_tokens], [240, 40])
    assert.ok(Math.abs(Number(after?.cost_usd) - 2 * Number(before?.cost_usd)) < 1e-12, `${after?.cost_usd} vs 2 × ${before?.cost_usd}`)
    const spans = await judgeSpans()
    assert.equal(spans.length, 3)
    assert.equal(new Set(spans.map((span) => span.trace_id)).size, 1)
    assert.deepEqual(spans.at(-1)?.status_code, 0)
  })

  it('is no trace for evaluators to judge: a judge never judges its own calls', async () => {
    await summariseAll(db)
    await sql`update spans set received_at = received_at - interval '2 minutes' where project_id = ${projectId}`.execute(db)
    const everything = await createEvaluator(db, { projectId, name: 'everything', connectionId: evaluator.connectionId, model: 'm', prompt: '{{output}}', promptRef: null, scoreName: 's', filter: {}, samplingRate: 1 })
    // Made before the judge spans arrived, as far as the watermark can tell.
    await sql`update evaluators set created_at = created_at - interval '1 hour' where id = ${everything.id}`.execute(db)
    const again = { ...everything, createdAt: new Date(Date.parse(everything.createdAt) - 3_600_000).toISOString() }
    assert.deepEqual(await takeNewTraces(db, again, { quietMs: 10, lookbackMs: 3_600_000, limit: 100 }), [])
    const { rows } = await sql<{ count: string }>`select count(*) from trace_summaries where project_id = ${projectId}`.execute(db)
    assert.equal(rows[0]?.count, '1', 'the judge’s trace is summarised, and left out')
  })
})
