import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { testEnvironment } from '@tracewell/config'
import { countSpans, createDb, type Db } from '@tracewell/db'
import { createBullMqSpanBatchProducer, type SpanBatchProducer } from '@tracewell/queue'
import { startSpanBatchWorker } from '../src/index.ts'
import { enqueueSpans, makeSpans, openQueue, OwnPostgres, testPrefix, waitFor, producerConnected } from './helpers.ts'

const run = promisify(execFile)
const { REDIS_URL } = testEnvironment()
const replayPath = fileURLToPath(new URL('../src/bin/replay-failed.ts', import.meta.url))
const quiet = { info() {}, warn() {}, error() {} }

// The writer is pointed at a Postgres of our own, which these tests stop and start again.
describe('span-batch worker through a Postgres outage (own Postgres on port 5439)', () => {
  const postgres = new OwnPostgres(5439)
  let db: Db
  const prefix = testPrefix()
  const inspect = openQueue(REDIS_URL, prefix)
  let producer: SpanBatchProducer

  before(async () => {
    await postgres.init()
    db = createDb({ databaseUrl: postgres.url, poolSize: 4 })
    producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 500 })
    await producerConnected(producer)
  })
  after(async () => {
    await producer.close()
    await inspect.close()
    await db.destroy()
    await postgres.destroy()
  })

  test('jobs retry with backoff while Postgres is down and every span lands once it is back', async () => {
    const writer = startSpanBatchWorker({ db, redis: REDIS_URL, prefix, concurrency: 2, maxAttempts: 12, logger: quiet })
    try {
      await enqueueSpans(producer, 'project-outage', makeSpans(1_000))
      await waitFor('the first batch', async () => (await countSpans(db, 'project-outage')) === 1_000)

      await postgres.stop()
      await enqueueSpans(producer, 'project-outage', makeSpans(1_000))
      await enqueueSpans(producer, 'project-other', makeSpans(200))
      // The writer tries, fails, and parks the jobs in `delayed` for their backoff.
      await waitFor('the jobs to be retrying', async () => (await inspect.queue.getDelayedCount()) > 0)
      assert.equal(await inspect.queue.getFailedCount(), 0)

      await postgres.start()
      await waitFor('every span to land', async () => (await countSpans(db, 'project-outage')) === 2_000 && (await countSpans(db, 'project-other')) === 200, 30_000, 100)
      assert.equal(await inspect.queue.getFailedCount(), 0)
    } finally {
      await writer.close()
    }
  })

  test('jobs that exhaust their attempts wait in the failed set until `npm run queue:replay` puts them back', async () => {
    await postgres.stop()
    const writer = startSpanBatchWorker({ db, redis: REDIS_URL, prefix, concurrency: 2, maxAttempts: 1, logger: quiet })
    try {
      await enqueueSpans(producer, 'project-replay', makeSpans(300))
      await enqueueSpans(producer, 'project-replay', makeSpans(300))
      await waitFor('both jobs to fail', async () => (await inspect.queue.getFailedCount()) === 2)

      const env = { ...process.env, REDIS_URL, QUEUE_PREFIX: prefix }
      const listed = await run(process.execPath, [replayPath, '--list'], { env })
      assert.match(listed.stdout, /^2 failed job\(s\)/)
      assert.equal(listed.stdout.match(/\tspans=300\tattempts=1\tgave up after 1 attempt\(s\): /g)?.length, 2)
      assert.equal(await inspect.queue.getFailedCount(), 2, '--list changes nothing')

      await postgres.start()
      const replayed = await run(process.execPath, [replayPath], { env })
      assert.equal(replayed.stdout, 'Replayed 2 failed job(s) (600 spans) back to waiting.\n')
      await waitFor('the replayed spans to land', async () => (await countSpans(db, 'project-replay')) === 600, 15_000, 100)
      assert.equal(await inspect.queue.getFailedCount(), 0)
    } finally {
      await writer.close()
    }
  })
})
