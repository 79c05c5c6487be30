import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import { countSpans } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { createBullMqSpanBatchProducer, projectTurnsKeyOf, type SpanBatchProducer } from '@tracewell/queue'
import { Redis } from 'ioredis'
import { startSpanBatchWorker } from '../src/index.ts'
import { enqueueSpans, makeSpans, openQueue, producerConnected, testPrefix, waitFor } from './helpers.ts'

const { REDIS_URL } = testEnvironment()
const quiet = { info() {}, warn() {}, error() {} }

// Order is asserted, not time: the backlog is queued before any writer runs, and one writer
// taking one job at a time records the order in which the projects' jobs were stored.
describe('writers drain projects in turns (real Redis and Postgres)', { timeout: 120_000 }, () => {
  let database: TestDatabase
  const prefix = testPrefix()
  const inspect = openQueue(REDIS_URL, prefix)
  const redis = new Redis(REDIS_URL)
  let producer: SpanBatchProducer

  before(async () => {
    database = await createTestDatabase()
    producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
    await producerConnected(producer)
  })
  after(async () => {
    await producer.close()
    await inspect.close()
    redis.disconnect()
    await database.drop()
  })

  test("a project's fresh job is stored before another's earlier backlog, and every span once", async () => {
    // A's backlog: 30 jobs, one per request (each awaited, so no two share a write), then B's.
    for (let i = 0; i < 30; i++) await enqueueSpans(producer, 'project-a', makeSpans(20))
    await enqueueSpans(producer, 'project-b', makeSpans(2))
    await enqueueSpans(producer, 'project-c', makeSpans(2))
    assert.equal(await redis.get(projectTurnsKeyOf(prefix, 'project-a')), '30', "A's jobs in flight, counted")
    assert.equal(await redis.get(projectTurnsKeyOf(prefix, 'project-b')), '1')
    // First turns on the wait list, later ones by priority: the queue as KEDA and the backlog see it.
    const counts = await inspect.queue.getJobCounts('wait', 'prioritized')
    assert.deepEqual(counts, { wait: 3, prioritized: 29 })

    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    const order: string[] = []
    for (const worker of writer.workers) worker.on('completed', (job) => order.push(job.data.requests[0]?.projectId ?? '?'))
    try {
      await waitFor('every job stored', async () => order.length === 32, 60_000)
      // FIFO would have stored B 31st and C 32nd, behind all of A's backlog.
      assert.deepEqual(order.slice(0, 3), ['project-a', 'project-b', 'project-c'])
      assert.equal(await countSpans(database.db, 'project-a'), 600)
      assert.equal(await countSpans(database.db, 'project-b'), 2)
      assert.equal(await countSpans(database.db, 'project-c'), 2)
      // Every finished job ended its turn: no counter is left behind.
      await waitFor('the counters to be gone', async () => (await redis.exists(projectTurnsKeyOf(prefix, 'project-a'), projectTurnsKeyOf(prefix, 'project-b'))) === 0)
    } finally {
      await writer.close()
    }
  })

  test("a project's fresh job arriving mid-drain is taken within one job of the backlog", async () => {
    for (let i = 0; i < 20; i++) await enqueueSpans(producer, 'project-d', makeSpans(10))
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    const order: string[] = []
    let injected = -1
    for (const worker of writer.workers) {
      worker.on('completed', (job) => {
        order.push(job.data.requests[0]?.projectId ?? '?')
        // After D's fifth job, E sends: its job must be the next or the one after (one may already be taken).
        if (order.length === 5) {
          injected = order.length
          void enqueueSpans(producer, 'project-e', makeSpans(2))
        }
      })
    }
    try {
      await waitFor('every job stored', async () => order.length === 21, 60_000)
      const position = order.indexOf('project-e')
      assert.ok(position - injected <= 1, `E's job stored ${position - injected} jobs after it was sent (order: ${order.join(',')})`)
      assert.equal(await countSpans(database.db, 'project-d'), 200)
      assert.equal(await countSpans(database.db, 'project-e'), 2)
    } finally {
      await writer.close()
    }
  })
})
