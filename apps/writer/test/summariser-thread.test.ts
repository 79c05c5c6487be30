import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { summaryBacklog, sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { storeSpans, summariserMetrics, summaryMismatches } from '@tracewell/write-path'
import { Registry } from 'prom-client'
import { startSummariserThread } from '../src/summariser-thread.ts'
import { makeSpans, waitFor } from './helpers.ts'

const store = (database: TestDatabase, projectId: string, spans: number) => storeSpans(database.db, [{ projectId, spans: () => makeSpans(spans) }])
const traces = 'tracewell_writer_aggregation_traces_folded_total'
const counted = async (registry: Registry, name: string) => (await registry.getSingleMetricAsString(name)).split('\n').find((line) => line.startsWith(name))

describe("the writer's summariser thread (real Postgres)", { timeout: 60_000 }, () => {
  let database: TestDatabase

  before(async () => {
    database = await createTestDatabase()
  })
  after(async () => {
    await database.drop()
  })

  test('folds what the writer stored, counts it in the writer’s metrics, and is started again when it dies', async () => {
    const registry = new Registry()
    const warnings: Array<{ object: object; message: string }> = []
    const logger = { info() {}, warn: (object: object, message: string) => warnings.push({ object, message }), error() {} }
    const thread = startSummariserThread({ databaseUrl: database.url, pollMs: 20, limits: { maxTraces: 10_000, maxDeltas: 500 }, logger, metrics: summariserMetrics(registry, database.db) })
    try {
      await store(database, 'thread-a', 40)
      // The count arrives as a message after the fold has committed: waited for, not read at once.
      await waitFor('the first spans counted', async () => (await counted(registry, traces)) === `${traces} 40`)
      assert.equal((await summaryBacklog(database.db)).deltas, 0)

      // The thread killed mid-run: a new one takes over and folds what is stored next.
      const first = thread.worker.threadId
      await thread.worker.terminate()
      await waitFor('another thread', async () => thread.worker.threadId !== first, 10_000)
      assert.equal(warnings[0]?.message, 'summariser thread stopped; starting another')
      await store(database, 'thread-a', 25)
      await waitFor('the later spans counted', async () => (await counted(registry, traces)) === `${traces} 65`)
      assert.equal((await summaryBacklog(database.db)).deltas, 0)
      const { rows } = await sql<{ traces: number }>`select count(*)::integer as traces from trace_summaries where project_id = 'thread-a'`.execute(database.db)
      assert.equal(rows[0]?.traces, 65)
      assert.deepEqual(await summaryMismatches(database.db, 'thread-a'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    } finally {
      await thread.close()
    }
    // Closed: the thread has ended, and nothing is folded any more.
    assert.equal(thread.worker.threadId, -1)
    await store(database, 'thread-b', 3)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal((await summaryBacklog(database.db)).deltas, 1)
  })
})
