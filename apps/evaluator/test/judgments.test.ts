import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import {
  completeFinishedRuns,
  completeJudgment,
  createEvaluatorRun,
  createEvaluator,
  createLlmConnection,
  createProject,
  createTeam,
  findEvaluatorRun,
  listJudgments,
  startQueuedRuns,
  takeNewTraces,
  TRACEWELL_SERVICE,
  type Db,
  type EvaluatorDto,
  type SpanInsert,
} from '@tracewell/db'
import { createEmbeddedTestDatabase, createTestDatabase } from '@tracewell/db/testing'
import { selfServiceName } from '@tracewell/llm-calls'
import { storeSpans, summariseAll } from '@tracewell/write-path'

/** Spans stored and folded into their traces' summaries: what a writer and its summariser do. */
async function insertSpans(db: Db, spans: readonly SpanInsert[]): Promise<void> {
  await storeSpans(db, spans)
  await summariseAll(db)
}

const engines = [
  { name: 'postgres', open: () => createTestDatabase() },
  { name: 'pglite', open: () => createEmbeddedTestDatabase() },
]

// Which traces an evaluator takes: new (a span arrived after it was made), complete (no span for
// the quiet period), matching its filter, sampled by a stable hash, each once; and runs' windows.

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

function span(projectId: string, traceId: string, service: string, startMs = Date.now() - 5_000): SpanInsert {
  const start = BigInt(startMs) * 1_000_000n
  return {
    projectId, traceId, spanId: hex(8), parentSpanId: null, name: 'chat', kind: 1,
    startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1_000_000n), durationNs: '1000000',
    traceState: null, statusCode: 0, statusMessage: null, serviceName: service, serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: { 'service.name': { stringValue: service } }, events: [], links: [],
  }
}

for (const engine of engines) {
  describe(`evaluation jobs on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    let projectId: string
    let connectionId: string
    const window = { quietMs: 60_000, lookbackMs: 3_600_000, limit: 100 }
    const age = (traceId: string, ms: number) => sql`update spans set received_at = received_at - ${`${ms} milliseconds`}::interval where trace_id = ${traceId}`.execute(db)
    const evaluator = (name: string, extra: Partial<Parameters<typeof createEvaluator>[1]> = {}): Promise<EvaluatorDto> =>
      createEvaluator(db, { projectId, name, connectionId, model: 'm', prompt: '{{output}}', promptRef: null, scoreName: 's', filter: {}, samplingRate: 1, ...extra })

    before(async () => {
      ;({ db, drop } = await engine.open())
      const team = await createTeam(db, { name: 't' })
      projectId = (await createProject(db, { teamId: team.id, name: 'p' })).id
      connectionId = (await createLlmConnection(db, { projectId, name: 'c', provider: 'openai', baseUrl: 'http://judge', apiKeySealed: 'v1:x', apiKeyHint: '…' })).id
    })
    after(() => drop())

    it('takes a new trace once it is quiet, once, and only if it matches', async () => {
      const judge = await evaluator('quiet', { filter: { service: 'bot' } })
      const [fresh, other] = [hex(16), hex(16)]
      await insertSpans(db, [span(projectId, fresh, 'bot'), span(projectId, other, 'billing')])
      assert.deepEqual(await takeNewTraces(db, judge, window), [], 'spans arrived within the quiet period')
      await age(fresh, 120_000)
      await age(other, 120_000)
      // Arrived before the evaluator was made once aged past its creation: not new any more.
      assert.deepEqual(await takeNewTraces(db, judge, window), [])
      const later = await evaluator('later', { filter: { service: 'bot' } })
      const late = hex(16)
      await insertSpans(db, [span(projectId, late, 'bot')])
      await new Promise((resolve) => setTimeout(resolve, 20))
      const taken = await takeNewTraces(db, later, { ...window, quietMs: 10 })
      assert.equal(taken.length, 1)
      assert.deepEqual(await takeNewTraces(db, later, { ...window, quietMs: 10 }), [], 'taken once')
      const { jobs } = await listJudgments(db, { projectId, evaluatorId: later.id, limit: 10 })
      assert.deepEqual(jobs.map((job) => [job.traceId, job.status]), [[late, 'pending']])
    })

    it('samples by a stable hash: left-out traces are recorded as skipped, never taken again', async () => {
      const none = await evaluator('none', { samplingRate: 0 })
      const half = await evaluator('half', { samplingRate: 0.5 })
      const traces = Array.from({ length: 40 }, () => hex(16))
      await insertSpans(db, traces.map((traceId) => span(projectId, traceId, 'bot')))
      await new Promise((resolve) => setTimeout(resolve, 20))
      assert.deepEqual(await takeNewTraces(db, none, { ...window, quietMs: 10 }), [])
      const noneJobs = (await listJudgments(db, { projectId, evaluatorId: none.id, limit: 100 })).jobs
      assert.ok(noneJobs.length >= 40 && noneJobs.every((job) => job.status === 'skipped' && job.skipReason === "not sampled (the evaluator's sampling rate)"))
      const taken = await takeNewTraces(db, half, { ...window, quietMs: 10 })
      assert.ok(taken.length > 5 && taken.length < 35, `${taken.length} of ~41 sampled at 0.5`)
      assert.deepEqual(await takeNewTraces(db, half, { ...window, quietMs: 10 }), [])
    })

    it('never takes Tracewell’s own traces (playground, experiments, judges), new or in a run', async () => {
      assert.equal(TRACEWELL_SERVICE, selfServiceName)
      const judge = await evaluator('not its own')
      const [own, app] = [hex(16), hex(16)]
      await insertSpans(db, [span(projectId, own, selfServiceName), span(projectId, app, 'bot')])
      await new Promise((resolve) => setTimeout(resolve, 20))
      assert.equal((await takeNewTraces(db, judge, { ...window, quietMs: 10 })).length, 1)
      const taken = await sql<{ trace_id: string }>`select trace_id from evaluation_jobs where evaluator_id = ${judge.id}`.execute(db)
      assert.deepEqual(taken.rows.map((row) => row.trace_id), [app])

      const day = Date.parse('2026-04-01T00:00:00Z')
      const [ownOld, appOld] = [hex(16), hex(16)]
      await insertSpans(db, [span(projectId, ownOld, selfServiceName, day + 1_000), span(projectId, appOld, 'bot', day + 2_000)])
      const run = await createEvaluatorRun(db, { projectId, evaluatorId: judge.id, from: new Date(day), to: new Date(day + 3_600_000) })
      assert.equal((await startQueuedRuns(db)).length, 1)
      const inRun = await sql<{ trace_id: string }>`select trace_id from evaluation_jobs where run_id = ${run.id}`.execute(db)
      assert.deepEqual(inRun.rows.map((row) => row.trace_id), [appOld])
    })

    it('starts a run over its window, every match, and completes it once nothing is pending', async () => {
      const judge = await evaluator('runner', { filter: { service: 'bot' } })
      const day = Date.parse('2026-03-01T00:00:00Z')
      const inside = [hex(16), hex(16)]
      await insertSpans(db, [span(projectId, inside[0] as string, 'bot', day + 1_000), span(projectId, inside[1] as string, 'bot', day + 2_000), span(projectId, hex(16), 'billing', day + 3_000), span(projectId, hex(16), 'bot', day + 86_400_000)])
      const run = await createEvaluatorRun(db, { projectId, evaluatorId: judge.id, from: new Date(day), to: new Date(day + 86_400_000) })
      const jobIds = await startQueuedRuns(db)
      assert.equal(jobIds.length, 2)
      assert.deepEqual(await startQueuedRuns(db), [], 'a run starts once')
      const started = await findEvaluatorRun(db, projectId, judge.id, run.id)
      assert.deepEqual([started?.status, started?.traceCount, started?.judgments.pending], ['running', 2, 2])
      await completeFinishedRuns(db)
      assert.equal((await findEvaluatorRun(db, projectId, judge.id, run.id))?.status, 'running')
      for (const { jobId } of jobIds) await completeJudgment(db, jobId, { scoreId: 's', judgeModel: 'm', latencyMs: 1 })
      await completeFinishedRuns(db)
      const done = await findEvaluatorRun(db, projectId, judge.id, run.id)
      assert.deepEqual([done?.status, done?.judgments.completed, typeof done?.finishedAt], ['completed', 2, 'string'])
    })
  })
}
