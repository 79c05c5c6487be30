import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { summaryBacklog } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { storeSpans, summariserMetrics } from '@tracewell/write-path'
import { Registry } from 'prom-client'
import { startSummariserThreadOnFirstDeltas } from '../src/summariser-on-first-deltas.ts'
import { makeSpans, waitFor } from './helpers.ts'

const traces = 'tracewell_writer_aggregation_traces_folded_total'
const quiet = { info() {}, warn() {}, error() {} }

describe("the writer's summariser thread, started on the first deltas (real Postgres)", { timeout: 60_000 }, () => {
  let database: TestDatabase

  before(async () => {
    database = await createTestDatabase()
  })
  after(async () => {
    await database.drop()
  })

  test('holds no thread while nothing waits, then folds the first spans stored', async () => {
    const registry = new Registry()
    const options = { databaseUrl: database.url, pollMs: 20, limits: { maxTraces: 10_000, maxDeltas: 500 }, logger: quiet, metrics: summariserMetrics(registry, database.db) }
    const summariser = startSummariserThreadOnFirstDeltas(database.db, options)
    const thread = () => summariser.thread
    try {
      await sleep(200)
      assert.equal(thread(), undefined)
      // The lag gauge is there from the start, thread or not.
      assert.match(await registry.getSingleMetricAsString('tracewell_writer_aggregation_lag_seconds'), /lag_seconds 0/)

      await storeSpans(database.db, [{ projectId: 'first-deltas', spans: () => makeSpans(12) }])
      await waitFor('the first spans folded', async () => (await registry.getSingleMetricAsString(traces)).includes(`${traces} 12`))
      assert.notEqual(thread(), undefined)
      assert.equal((await summaryBacklog(database.db)).deltas, 0)
    } finally {
      await summariser.close()
    }
    // Closed: the thread has ended.
    assert.equal(thread()?.worker.threadId, -1)
  })

  test('closed before any delta came, it never starts the thread', async () => {
    const registry = new Registry()
    const summariser = startSummariserThreadOnFirstDeltas(database.db, { databaseUrl: database.url, pollMs: 20, limits: { maxTraces: 10_000, maxDeltas: 500 }, logger: quiet, metrics: summariserMetrics(registry, database.db) })
    await sleep(50)
    await summariser.close()
    await storeSpans(database.db, [{ projectId: 'after-close', spans: () => makeSpans(2) }])
    await sleep(200)
    assert.equal(summariser.thread, undefined)
    assert.equal((await summaryBacklog(database.db)).deltas, 1)
  })
})
