import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { testEnvironment } from '@tracewell/config'
import { createErasure, findErasure, sql, type Db, type SpanInsert } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '@tracewell/write-path'
import { testPrefix, waitFor } from './helpers.ts'

const { REDIS_URL } = testEnvironment()
const serverPath = fileURLToPath(new URL('../src/server.ts', import.meta.url))

let database: TestDatabase
const prefix = testPrefix()
const children: ChildProcess[] = []

function startWriter(): ChildProcess {
  const child = spawn(process.execPath, [serverPath], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // Small batches, so the kill lands between many committed ones and inside one.
      ERASURE_BATCH_TRACES: '10',
      ERASURE_POLL_MS: '50',
      ERASURE_RECHECK_AFTER_MS: '1000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  return child
}

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

/** Traces of three spans each over six hours, every third one the victim's, with LLM calls priced in decimals floats cannot add. */
function traces(projectId: string, count: number): SpanInsert[] {
  const spans: SpanInsert[] = []
  for (let t = 0; t < count; t++) {
    const traceId = t.toString(16).padStart(32, '0')
    const start = t0 + BigInt((t * 7_919) % (6 * 3_600)) * second
    for (let s = 0; s < 3; s++) {
      const model = s === 0 ? null : s === 1 ? 'gpt-4o' : 'claude-3-5-sonnet'
      const duration = BigInt(10 + ((t * 31 + s * 17) % 3_000)) * 1_000_000n
      spans.push({
        projectId, traceId, spanId: `${s.toString(16).padStart(15, '0')}1`, parentSpanId: s === 0 ? null : '0000000000000001',
        name: `op ${s}`, kind: 1, startTimeUnixNano: String(start + BigInt(s) * second), endTimeUnixNano: String(start + BigInt(s) * second + duration),
        durationNs: String(duration), traceState: null, statusCode: t % 11 === 0 ? 2 : 0, statusMessage: null, serviceName: 'api', serviceVersion: null,
        scopeName: null, scopeVersion: null, llmVendor: model === null ? null : 'v', llmModel: model, llmRequestType: model === null ? null : 'chat',
        inputTokens: model === null ? null : 100 + t, outputTokens: model === null ? null : 10, totalTokens: null,
        totalCostUsd: model === null ? null : [0.1, 0.2, 1e-7, 0.3333333333333333][t % 4]!,
        sessionId: `session-${t % 50}`, userId: t % 3 === 0 ? 'victim' : `user-${t % 3}`, attributes: {}, resourceAttributes: {}, events: [], links: [],
      })
    }
  }
  return spans
}

/** Rows of usage_rollups that differ between two projects, both ways (costs as numbers, to the last digit). */
async function rollupDifferences(db: Db, projectId: string, reference: string): Promise<number> {
  const rows = (project: string) => sql`
    select dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency from usage_rollups where project_id = ${project}`
  const { rows: diff } = await sql<{ n: number }>`
    select count(*)::integer as n from ((${rows(projectId)} except ${rows(reference)}) union all (${rows(reference)} except ${rows(projectId)})) as d`.execute(db)
  return diff[0]!.n
}

before(async () => {
  database = await createTestDatabase()
})
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await database.drop()
})

test('an erasure whose writer is SIGKILLed mid-way completes after a restart: counts exact, nothing of the subject left, rollups as if never stored', async () => {
  const db = database.db
  await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
  await sql`insert into projects (id, team_id, name) values ('p', 't', 'p')`.execute(db)
  const all = traces('p', 1_500)
  const victims = all.filter((span) => span.userId === 'victim')
  const victimTraces = [...new Set(victims.map((span) => span.traceId))]
  await storeSpans(db, all)
  // The reference: what is left afterwards, stored and folded from scratch in a project of its own.
  await storeSpans(db, all.filter((span) => span.userId !== 'victim').map((span) => ({ ...span, projectId: 'ref' })))
  await summariseAll(db)
  for (const traceId of victimTraces.slice(0, 30)) {
    await sql`insert into scores (project_id, id, trace_id, name, data_type, value, source) values ('p', ${`s-${traceId}`}, ${traceId}, 'thumbs', 'boolean', 1, 'api')`.execute(db)
  }
  const erasure = await createErasure(db, 'p', { userId: 'victim' }, null)

  const first = startWriter()
  const takenAtKill = await waitFor(
    'the erasure to be mid-way',
    async () => {
      const { deleted } = (await findErasure(db, 'p', erasure.id))!
      return deleted.traces > 0 && deleted.traces
    },
    60_000,
    5,
  )
  first.kill('SIGKILL')
  await once(first, 'exit')
  const atKill = (await findErasure(db, 'p', erasure.id))!
  assert.ok(atKill.deleted.traces < victimTraces.length, `the kill landed mid-way (${takenAtKill} of ${victimTraces.length} traces taken)`)
  assert.equal(atKill.status, 'running')
  // What a committed batch recorded is exactly what is gone: no batch half done.
  const { rows: [left] } = await sql<{ spans: number }>`select count(*)::integer as spans from spans where project_id = 'p' and user_id = 'victim'`.execute(db)
  assert.equal(left!.spans, victims.length - atKill.deleted.spans)

  const second = startWriter()
  const done = await waitFor('the erasure to complete', async () => {
    const current = (await findErasure(db, 'p', erasure.id))!
    return current.status === 'completed' && current
  }, 120_000, 50)
  assert.deepEqual(done.deleted, { spans: victims.length, traces: victimTraces.length, sessions: 0, scores: 30, judgments: 0, datasetItems: 0 })

  const { rows: [remaining] } = await sql<{ spans: number; summaries: number; rollups: number; scores: number }>`
    select (select count(*)::integer from spans where project_id = 'p' and (user_id = 'victim' or trace_id = any(${victimTraces}::text[]))) as spans,
      (select count(*)::integer from trace_summaries where project_id = 'p' and (user_id = 'victim' or trace_id = any(${victimTraces}::text[]))) as summaries,
      (select count(*)::integer from usage_rollups where project_id = 'p' and dimension = 'user' and value = 'victim') as rollups,
      (select count(*)::integer from scores where project_id = 'p') as scores`.execute(db)
  assert.deepEqual(remaining, { spans: 0, summaries: 0, rollups: 0, scores: 0 })
  assert.equal(await rollupDifferences(db, 'p', 'ref'), 0)
  assert.deepEqual(await summaryMismatches(db, 'p'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
  const { rows: [others] } = await sql<{ spans: number }>`select count(*)::integer as spans from spans where project_id = 'p'`.execute(db)
  assert.equal(others!.spans, all.length - victims.length)

  second.kill('SIGTERM')
  const [code] = await once(second, 'exit')
  assert.equal(code, 0)
})
