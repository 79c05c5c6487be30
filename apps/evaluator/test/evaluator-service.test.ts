import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { encryptionKeyOf, sealSecret } from '@tracewell/auth'
import { EvaluatorConfigSchema, loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import {
  createAnnotationQueue,
  createEvaluator,
  createLlmConnection,
  createProject,
  createTeam,
  listJudgments,
  listScores,
  llmConnectionKeyContext,
  type Db,
  type SpanInsert,
} from '@tracewell/db'
import { selfServiceName } from '@tracewell/llm-calls'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { sql } from 'kysely'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildApp } from '../src/index.ts'

// The evaluator as its own service (npm run start:evaluator): the same build the server runs,
// over Postgres and its BullMQ queue in Redis, with a fake OpenAI-compatible judge.

const keyHex = randomBytes(32).toString('hex')

/** Spans stored and folded into their traces' summaries: what a writer and its summariser do. */
async function insertSpans(db: Db, spans: readonly SpanInsert[]): Promise<void> {
  await storeSpans(db, spans)
  await summariseAll(db)
}

function span(projectId: string, traceId: string, answer: string, overrides: Partial<SpanInsert> = {}): SpanInsert {
  const now = BigInt(Date.now()) * 1_000_000n
  return {
    projectId, traceId, spanId: randomBytes(8).toString('hex'), parentSpanId: null, name: 'chat', kind: 3,
    startTimeUnixNano: String(now - 1_000_000_000n), endTimeUnixNano: String(now), durationNs: '1000000000',
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10, outputTokens: 5, totalTokens: 15,
    attributes: { 'input.value': { stringValue: 'What is 2 + 2?' }, 'output.value': { stringValue: answer } }, resourceAttributes: {}, events: [], links: [],
    ...overrides,
  }
}

describe('the evaluator service', { timeout: 120_000 }, () => {
  let database: TestDatabase
  let app: App
  let judge: Server
  let judgeUrl: string
  let projectId: string
  const asked: string[] = []

  before(async () => {
    judge = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        asked.push(body)
        if (request.headers.authorization !== 'Bearer sk-right') {
          response.writeHead(401, { 'content-type': 'application/json' })
          return response.end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }))
        }
        const correct = body.includes('Answer: 4')
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({
          id: 'x', object: 'chat.completion', created: 0, model: 'judge-model',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify({ score: correct ? 5 : 1, reasoning: correct ? 'right' : 'wrong' }) } }],
          usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
        }))
      })
    })
    await new Promise<void>((resolve) => judge.listen(0, '127.0.0.1', resolve))
    judgeUrl = `http://127.0.0.1:${(judge.address() as AddressInfo).port}`
    database = await createTestDatabase()
    const team = await createTeam(database.db, { name: 't' })
    projectId = (await createProject(database.db, { teamId: team.id, name: 'p' })).id
    const { REDIS_URL } = loadConfig(TestEnvironmentSchema)
    const config = loadConfig(EvaluatorConfigSchema, {
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'silent',
      LLM_CONNECTION_ENCRYPTION_KEY: keyHex,
      EVALUATOR_POLL_INTERVAL_MS: '200',
      EVALUATOR_TRACE_QUIET_MS: '0',
      EVALUATOR_BACKOFF_MS: '50',
      EVALUATOR_MAX_ATTEMPTS: '4',
      // The fake judge listens on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
    })
    app = await buildApp(config, { db: database.db })
    await app.ready()
  })
  after(async () => {
    await app?.close()
    await database?.drop()
    judge?.close()
  })

  const connect = (name: string, apiKey: string) =>
    createLlmConnection(database.db, { projectId, name, provider: 'openai', baseUrl: judgeUrl, apiKeySealed: sealSecret(apiKey, encryptionKeyOf(keyHex), llmConnectionKeyContext(projectId)), apiKeyHint: '…' })

  it('is ready with its queue, judges new traces into scores, and sends the low ones to its review queue', async () => {
    assert.deepEqual((await app.inject({ url: '/readyz' })).json(), { status: 'ok', checks: { postgres: 'ok', queue: 'ok' } })
    const connection = await connect('right', 'sk-right')
    const review = await createAnnotationQueue(database.db, projectId, { name: 'low math', description: '', scoreConfigIds: [], assigneeIds: [] }, null)
    const evaluator = await createEvaluator(database.db, {
      projectId, name: 'math', connectionId: connection.id, model: 'judge-model', prompt: 'Question: {{input}} Answer: {{output}}', promptRef: null, scoreName: 'math', filter: {}, samplingRate: 1,
      reviewQueue: { queueId: review.id, below: 3 },
    })
    const right = randomBytes(16).toString('hex')
    const wrong = randomBytes(16).toString('hex')
    await insertSpans(database.db, [span(projectId, right, '4'), span(projectId, wrong, '5')])
    const scores = async () => (await listScores(database.db, { projectId, limit: 10, name: 'math' })).scores
    for (const deadline = Date.now() + 20_000; (await scores()).length < 2 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100))
    const byTrace = new Map((await scores()).map((score) => [score.traceId, [score.numericValue, score.comment, score.source, score.evaluatorId]]))
    assert.deepEqual(byTrace.get(right), [5, 'right', 'eval', evaluator.id])
    assert.deepEqual(byTrace.get(wrong), [1, 'wrong', 'eval', evaluator.id])
    // Counted once the judgment's row is complete, a moment after its score is visible; polled
    // with a pause: inject() answers within the event loop's turn, and asked back to back (3,900
    // times in 10 s in one CI run) it starved the worker's Redis I/O, so the count never came.
    const completed = /tracewell_evaluator_judgments_total\{outcome="completed"\} 2\n/
    let metrics = ''
    for (const deadline = Date.now() + 10_000; !completed.test(metrics) && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
      metrics = (await app.inject({ url: '/metrics' })).body
    }
    assert.match(metrics, completed)
    const jobs = (await listJudgments(database.db, { projectId, evaluatorId: evaluator.id, limit: 10 })).jobs
    assert.deepEqual(jobs.map((job) => [job.status, job.attempts, job.error, job.inputTokens, job.outputTokens]), [['completed', 1, null, 30, 8], ['completed', 1, null, 30, 8]])
    const queued = await database.db.selectFrom('annotation_queue_items').select(['object_type', 'object_id']).where('queue_id', '=', review.id).execute()
    assert.deepEqual(queued, [{ object_type: 'trace', object_id: wrong }], 'only the trace scored below 3')
  })

  it('fails a judgment at once when the judge refuses the key: no retry can help', async () => {
    const connection = await connect('wrong', 'sk-wrong')
    const evaluator = await createEvaluator(database.db, {
      projectId, name: 'bad key', connectionId: connection.id, model: 'judge-model', prompt: '{{output}}', promptRef: null, scoreName: 'other', filter: {}, samplingRate: 1,
    })
    const traceId = randomBytes(16).toString('hex')
    await insertSpans(database.db, [span(projectId, traceId, '4')])
    const failed = async () => (await listJudgments(database.db, { projectId, evaluatorId: evaluator.id, status: 'failed', limit: 10 })).jobs
    for (const deadline = Date.now() + 20_000; (await failed()).length < 1 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100))
    // Only this trace: the first test's arrived before this evaluator existed. Failed on its first attempt of four.
    const jobs = await failed()
    assert.deepEqual(jobs.map((job) => [job.traceId, job.attempts, job.status]), [[traceId, 1, 'failed']])
    assert.equal(jobs[0]?.error, 'the judge answered 401 (the API key was refused)')
  })

  it('skips a trace with nothing to judge without asking the judge, and never takes Tracewell’s own traces', async () => {
    const connection = await connect('skipping', 'sk-right')
    const evaluator = await createEvaluator(database.db, {
      projectId, name: 'needs both', connectionId: connection.id, model: 'judge-model', prompt: 'Question: {{input}} Answer: {{output}}', promptRef: null, scoreName: 'both', filter: {}, samplingRate: 1,
    })
    // The earlier tests' judgments (the first evaluator judges the second test's trace too) finish
    // first: only what this test's traces cause may count.
    const pending = async () => Number((await sql<{ n: string }>`select count(*) as n from evaluation_jobs where status = 'pending'`.execute(database.db)).rows[0]?.n)
    for (const deadline = Date.now() + 20_000; (await pending()) > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100))
    const asksBefore = asked.length
    const empty = randomBytes(16).toString('hex')
    const own = randomBytes(16).toString('hex')
    // A trace without messages, and a judge's own call (messages and all, a question of its own) that the scheduler must leave alone.
    const ownQuestion = `What is ${own}?`
    await insertSpans(database.db, [
      span(projectId, empty, '4', { attributes: { 'http.route': { stringValue: '/health' } }, llmModel: null, llmVendor: null }),
      span(projectId, own, '4', {
        serviceName: selfServiceName, resourceAttributes: { 'service.name': { stringValue: selfServiceName } },
        attributes: { 'input.value': { stringValue: ownQuestion }, 'output.value': { stringValue: '4' } },
      }),
    ])
    // Every evaluator takes the empty trace, in the same look that would have taken the other.
    const jobsOf = async () =>
      (await sql<{ trace_id: string; statuses: string[] }>`
        select trace_id, array_agg(status order by status) as statuses from evaluation_jobs where trace_id in (${empty}, ${own}) group by trace_id`.execute(database.db)).rows
    const allSkipped = [{ trace_id: empty, statuses: ['skipped', 'skipped', 'skipped'] }]
    for (const deadline = Date.now() + 20_000; JSON.stringify(await jobsOf()) !== JSON.stringify(allSkipped) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100))
    assert.deepEqual(await jobsOf(), allSkipped)
    const { jobs } = await listJudgments(database.db, { projectId, evaluatorId: evaluator.id, limit: 10 })
    assert.deepEqual(jobs.map((job) => [job.traceId, job.status, job.attempts, job.skipReason, job.error, job.scoreId]), [
      [empty, 'skipped', 1, 'the trace has no input and no output to judge (the template uses {{input}} and {{output}})', null, null],
    ])
    // Asked nothing about these two: every ask since holds an earlier test's question (a first
    // evaluator's judgment of the second test's trace may start late: the scheduler had not looked yet).
    assert.deepEqual(asked.slice(asksBefore).filter((body) => !body.includes('What is 2 + 2?') || body.includes(ownQuestion)), [], 'the judge was asked nothing')
    assert.deepEqual((await listScores(database.db, { projectId, limit: 10, traceId: empty })).scores, [])
  })
})
