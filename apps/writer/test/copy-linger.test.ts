import { after, before, describe, test } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import { countSpans } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { createBullMqSpanBatchProducer, type SpanBatchProducer } from '@tracewell/queue'
import { startSpanBatchWorker } from '../src/index.ts'
import { enqueueSpans, makeSpans, producerConnected, testPrefix, waitFor } from './helpers.ts'

const { REDIS_URL } = testEnvironment()
const quiet = { info() {}, warn() {}, error() {} }

// The linger for a COPY (WRITER_LINGER_MS) waits for jobs that can still come. A shard's worker
// that holds every job it may take brings no further one until a COPY ends, whatever the other
// shards' idle workers might: the linger must not hold its backlog (the Redis Cluster failover
// test of ingest found three quarters of the spans unstored a minute after it, four busy shards
// draining one job per linger while two shards stood idle).
describe("the writer's linger with several shards (real Redis and Postgres)", { timeout: 120_000 }, () => {
  let database: TestDatabase
  const prefix = testPrefix()
  let producer: SpanBatchProducer

  before(async () => {
    database = await createTestDatabase()
    producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, shards: 2, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
    await producerConnected(producer)
  })
  after(async () => {
    await producer.close()
    await database.drop()
  })

  test("a busy shard's backlog is stored without waiting out the linger while another shard is idle", async () => {
    // One project, so one shard: its worker takes one job at a time (concurrency 2 over 2 shards).
    for (let i = 0; i < 10; i++) await enqueueSpans(producer, 'project-busy', makeSpans(3))
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, shards: 2, concurrency: 2, lingerMs: 60_000, logger: quiet })
    try {
      // Ten jobs each waiting out a 60 s linger would take ten minutes.
      await waitFor('the busy shard drained', async () => (await countSpans(database.db, 'project-busy')) === 30, 30_000)
    } finally {
      await writer.close()
    }
  })

  test('jobs waiting for the body bytes the lingering ones hold end the linger', async () => {
    // A budget of one byte: one job in hand at a time (a larger one goes alone), the others wait for it.
    for (let i = 0; i < 5; i++) await enqueueSpans(producer, 'project-large', makeSpans(3))
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, shards: 2, concurrency: 8, maxBodyBytes: 1, lingerMs: 20_000, logger: quiet })
    try {
      // Each of the first four goes as the next one waits for its bytes (twenty seconds each
      // without); the last, with none behind it, lingers as a writer that keeps up does.
      await waitFor('the jobs that held others back stored', async () => (await countSpans(database.db, 'project-large')) >= 12, 10_000)
      await waitFor('the last job stored once its linger is over', async () => (await countSpans(database.db, 'project-large')) === 15, 40_000)
    } finally {
      await writer.close()
    }
  })
})
