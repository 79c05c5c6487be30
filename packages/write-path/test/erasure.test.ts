import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createErasure, findErasure, sql, type Db, type ErasureDto, type ErasureSubject, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { seededRandom } from '@tracewell/test-support'
import { DEFAULT_FOLD_LIMITS, eraseBatch, storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

/**
 * Traces of users u0..u3 (and some of no user) over three hours: models or none, agent spans,
 * tokens unknown on some spans, costs floating point cannot add exactly, errors, and sessions, one
 * of them ('shared') used by u1 and u2 both.
 */
function generatedTraces(projectId: string, traces: number, seed: number): SpanInsert[] {
  const random = seededRandom(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const spans: SpanInsert[] = []
  for (let t = 0; t < traces; t++) {
    const traceId = `${seed.toString(16).padStart(8, '0')}${t.toString(16).padStart(24, '0')}`
    const start = t0 + BigInt(Math.floor(random() * 3 * 3600)) * second
    const user = t % 9 === 8 ? null : `u${t % 4}`
    const session = user === 'u1' || user === 'u2' ? (t % 3 === 0 ? 'shared' : `s-${user}-${(t >> 2) % 2}`) : null
    const count = 1 + Math.floor(random() * 6)
    for (let s = 0; s < count; s++) {
      const spanStart = start + BigInt(Math.floor(random() * 900)) * second
      const duration = BigInt(1 + Math.floor(random() * 3_000)) * 1_000_000n + 123_457n
      const model = random() < 0.7 ? pick(['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet']) : null
      spans.push({
        projectId, traceId, spanId: `${s.toString(16).padStart(15, '0')}1`, parentSpanId: s === 0 ? null : '0000000000000001',
        name: `op ${s}`, kind: 1, startTimeUnixNano: String(spanStart), endTimeUnixNano: String(spanStart + duration), durationNs: String(duration),
        traceState: null, statusCode: random() < 0.1 ? 2 : 0, statusMessage: null, serviceName: pick(['api', 'worker', null]),
        serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: model === null ? null : model.startsWith('gpt') ? 'openai' : 'anthropic',
        llmModel: model, llmRequestType: s === 1 && random() < 0.3 ? 'invoke_agent' : model === null ? null : 'chat',
        inputTokens: model === null || random() < 0.2 ? null : Math.floor(random() * 2000), outputTokens: model === null ? null : Math.floor(random() * 500),
        totalTokens: null, totalCostUsd: model === null ? null : pick([0.1, 0.2, 1e-7, 0.3333333333333333, 0.000123, 2.5e-9]),
        sessionId: session, userId: user, attributes: { 'gen_ai.prompt': { stringValue: `words of trace ${t}` } }, resourceAttributes: {}, events: [], links: [],
      })
    }
  }
  return spans
}

/** Runs an erasure's batches (each one transaction, as the writers' loop does) until it completes. */
async function runToCompletion(db: Db, erasure: ErasureDto, maxTraces: number): Promise<ErasureDto> {
  for (let round = 0; round < 1_000; round++) {
    const current = (await findErasure(db, erasure.projectId, erasure.id))!
    if (current.status === 'completed') return current
    const result = await eraseBatch(db, current, { maxTraces, foldLimits: DEFAULT_FOLD_LIMITS, recheckAfterMs: 0 })
    assert.notEqual(result, 'busy', 'no fold runs beside the test')
  }
  throw new Error('the erasure did not complete')
}

/** The project's rollup rows that differ from another project's, both ways (costs compared as numbers, to the last digit). */
async function rollupDifferences(db: Db, projectId: string, reference: string): Promise<number> {
  const rows = (project: string) => sql`
    select dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency from usage_rollups where project_id = ${project}`
  const { rows: diff } = await sql<{ n: number }>`
    select count(*)::integer as n from ((${rows(projectId)} except ${rows(reference)}) union all (${rows(reference)} except ${rows(projectId)})) as d`.execute(db)
  return diff[0]!.n
}

async function projectWithTeam(db: Db, projectId: string): Promise<void> {
  await sql`insert into teams (id, name) values (${`team-${projectId}`}, ${projectId}) on conflict do nothing`.execute(db)
  await sql`insert into projects (id, team_id, name) values (${projectId}, ${`team-${projectId}`}, ${projectId}) on conflict do nothing`.execute(db)
}

/** A score, a judgment and a dataset item (with an experiment result) on each of the traces. */
async function attachToTraces(db: Db, projectId: string, traceIds: readonly string[]): Promise<void> {
  await sql`insert into llm_connections (id, project_id, name, provider, base_url, api_key_sealed, api_key_hint)
    values (${`c-${projectId}`}, ${projectId}, 'judge', 'openai', 'http://127.0.0.1:1', 'sealed', 'abcd') on conflict do nothing`.execute(db)
  await sql`insert into evaluators (id, project_id, name, connection_id, model, prompt, score_name)
    values (${`e-${projectId}`}, ${projectId}, 'judge', ${`c-${projectId}`}, 'm', 'p', 'helpful') on conflict do nothing`.execute(db)
  await sql`insert into datasets (id, project_id, name) values (${`d-${projectId}`}, ${projectId}, 'taken') on conflict do nothing`.execute(db)
  await sql`insert into experiments (id, project_id, dataset_id, dataset_version, name, kind) values (${`x-${projectId}`}, ${projectId}, ${`d-${projectId}`}, 1, 'run', 'sdk') on conflict do nothing`.execute(db)
  for (const [i, traceId] of traceIds.entries()) {
    await sql`insert into scores (project_id, id, trace_id, name, data_type, value, source) values (${projectId}, ${`score-${traceId}`}, ${traceId}, 'helpful', 'numeric', 1, 'annotation')`.execute(db)
    await sql`insert into evaluation_jobs (project_id, evaluator_id, trace_id, status) values (${projectId}, ${`e-${projectId}`}, ${traceId}, 'completed')`.execute(db)
    // Two versions of the item: both go.
    await sql`insert into dataset_items (dataset_id, id, valid_from, valid_to, position, input, source_trace_id)
      values (${`d-${projectId}`}, ${`item-${traceId}`}, 1, 2, ${i}, '"question"', ${traceId}), (${`d-${projectId}`}, ${`item-${traceId}`}, 2, null, ${i}, '"question?"', ${traceId})`.execute(db)
    await sql`insert into experiment_results (project_id, experiment_id, dataset_item_id, status, output, trace_id)
      values (${projectId}, ${`x-${projectId}`}, ${`item-${traceId}`}, 'completed', '"answer"', ${`f${traceId.slice(1)}`})`.execute(db)
  }
}

const countOf = async (db: Db, query: ReturnType<typeof sql<{ n: number }>>): Promise<number> => (await query.execute(db)).rows[0]!.n

for (const engine of engines) {
  describe(`erasure on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('erases a user: the rollups end exactly as a from-scratch fold of what is left, other users untouched', async () => {
      const all = generatedTraces('p-user', 60, 7)
      const erased = new Set(all.filter((span) => span.userId === 'u1').map((span) => span.traceId))
      await projectWithTeam(db, 'p-user')
      // The reference: the same spans without u1's traces, folded from scratch in a project of its own.
      await storeSpans(db, all.filter((span) => !erased.has(span.traceId)).map((span) => ({ ...span, projectId: 'p-ref' })))
      // Most spans folded; the last of u1's still waiting in the summary deltas when the erasure starts.
      const late = all.filter((span) => erased.has(span.traceId)).slice(-5)
      await storeSpans(db, all.filter((span) => !late.includes(span)))
      await summariseAll(db)
      await storeSpans(db, late)
      await attachToTraces(db, 'p-user', [...erased].slice(0, 4))
      const kept = [...new Set(all.filter((span) => span.userId === 'u2').map((span) => span.traceId))].slice(0, 2)
      await attachToTraces(db, 'p-user', kept)
      const summariesOf = async () => (await sql<Record<string, unknown>>`select * from trace_summaries where project_id = 'p-user' and trace_id <> all(${[...erased]}::text[]) order by trace_id`.execute(db)).rows.map((row) => ({ ...row, fold_day: undefined }))
      const othersBefore = await summariesOf()

      const erasure = await createErasure(db, 'p-user', { userId: 'u1' }, 'key-1')
      assert.equal(erasure.status, 'queued')
      const done = await runToCompletion(db, erasure, 4)
      await summariseAll(db)

      const erasedSpans = all.filter((span) => erased.has(span.traceId)).length
      assert.deepEqual(done.deleted, { spans: erasedSpans, traces: erased.size, sessions: 2, scores: 4, judgments: 4, datasetItems: 4 })
      assert.equal(await rollupDifferences(db, 'p-user', 'p-ref'), 0)
      assert.deepEqual(await summaryMismatches(db, 'p-user'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      assert.equal(await countOf(db, sql`select count(*)::integer as n from spans where project_id = 'p-user' and trace_id = any(${[...erased]}::text[])`), 0)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from usage_rollups where project_id = 'p-user' and dimension = 'user' and value = 'u1'`), 0)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from summary_deltas`), 0)
      // The other users' traces, their summaries, scores, judgments and items are as they were.
      assert.deepEqual(await summariesOf(), othersBefore)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from spans where project_id = 'p-user'`), all.length - erasedSpans)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from scores where project_id = 'p-user'`), 2)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from evaluation_jobs where project_id = 'p-user'`), 2)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from judgment_dimensions where project_id = 'p-user'`), 2)
      assert.equal(await countOf(db, sql`select count(distinct id)::integer as n from dataset_items where dataset_id = 'd-p-user'`), 2)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from experiment_results where project_id = 'p-user'`), 2)
      // The shared session keeps u2's traces; u1's own sessions are gone.
      const { rows: sessions } = await sql<{ session_id: string }>`select session_id from session_summaries where project_id = 'p-user' order by session_id`.execute(db)
      assert.deepEqual(sessions.map((row) => row.session_id), ['s-u2-0', 's-u2-1', 'shared'])
      // The results of the erased items are runs of their inputs: their traces are on the erasure's list.
      const { rows: listed } = await sql<{ trace_id: string }>`select trace_id from erasure_traces where erasure_id = ${erasure.id} and trace_id like 'f%'`.execute(db)
      assert.equal(listed.length, 4)
    })

    it('erases a session and traces by id, and a second erasure of the same subject finds nothing', async () => {
      const all = generatedTraces('p-session', 30, 11)
      await projectWithTeam(db, 'p-session')
      await storeSpans(db, all)
      await summariseAll(db)
      const inShared = new Set(all.filter((span) => span.sessionId === 'shared').map((span) => span.traceId))
      const byId = [...new Set(all.filter((span) => span.userId === 'u3').map((span) => span.traceId))].slice(0, 3)
      const subjects: ErasureSubject[] = [{ sessionId: 'shared' }, { traceIds: [...byId, 'ffffffffffffffffffffffffffffffff'] }]
      const results = []
      for (const subject of subjects) results.push(await runToCompletion(db, await createErasure(db, 'p-session', subject, null), 2))
      assert.equal(results[0]!.deleted.traces, inShared.size)
      assert.equal(results[0]!.deleted.sessions, 1)
      assert.equal(results[1]!.deleted.traces, 3)
      assert.equal(results[1]!.deleted.spans, all.filter((span) => byId.includes(span.traceId)).length)
      assert.deepEqual(await summaryMismatches(db, 'p-session'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      const again = await runToCompletion(db, await createErasure(db, 'p-session', { sessionId: 'shared' }, null), 2)
      assert.deepEqual(again.deleted, { spans: 0, traces: 0, sessions: 0, scores: 0, judgments: 0, datasetItems: 0 })
    })

    it('takes spans stored after its first pass in its re-check', async () => {
      const all = generatedTraces('p-late', 12, 13)
      await projectWithTeam(db, 'p-late')
      const u0 = all.filter((span) => span.userId === 'u0')
      const lastTrace = u0.at(-1)!.traceId
      const late = u0.filter((span) => span.traceId === lastTrace)
      await storeSpans(db, all.filter((span) => span.traceId !== lastTrace))
      await summariseAll(db)
      const erasure = await createErasure(db, 'p-late', { userId: 'u0' }, null)
      // The first pass, until it moves to its re-check.
      while ((await findErasure(db, 'p-late', erasure.id))!.status !== 'rechecking') {
        await eraseBatch(db, (await findErasure(db, 'p-late', erasure.id))!, { maxTraces: 50, foldLimits: DEFAULT_FOLD_LIMITS, recheckAfterMs: 0 })
      }
      // A trace of the user that was still queued is stored now, before the re-check.
      await storeSpans(db, late)
      const done = await runToCompletion(db, erasure, 50)
      assert.equal(done.deleted.spans, u0.length)
      assert.equal(await countOf(db, sql`select count(*)::integer as n from spans where project_id = 'p-late' and user_id = 'u0'`), 0)
      assert.deepEqual(await summaryMismatches(db, 'p-late'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })
  })
}
