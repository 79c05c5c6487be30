import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { testEnvironment } from '@tracewell/config'
import { countSpans, sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { createBullMqSpanBatchProducer } from '@tracewell/queue'
import { enqueueSpans, makeSpans, openQueue, testPrefix, waitFor, producerConnected } from './helpers.ts'

const { REDIS_URL } = testEnvironment()
const serverPath = fileURLToPath(new URL('../src/server.ts', import.meta.url))

let database: TestDatabase
const prefix = testPrefix()
const inspect = openQueue(REDIS_URL, prefix)
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
      WRITER_CONCURRENCY: '2',
      // The default lock and stalled check (8 s, 2 s): the test holds them to their promise.
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  return child
}

before(async () => {
  database = await createTestDatabase()
})
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await inspect.close()
  await database.drop()
})

test('a writer SIGKILLed mid-batch loses nothing: its jobs are redone within seconds, every span stored exactly once', async () => {
  const total = 40_000
  const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 10_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
  try {
    // Connected first: building the bodies below blocks the event loop for a while on a busy
    // machine, longer than the producer waits for its first connection.
    await producerConnected(producer)
    const requests = Array.from({ length: 20 }, () => makeSpans(total / 20))
    await Promise.all(requests.map((spans) => enqueueSpans(producer, 'project-crash', spans)))
  } finally {
    await producer.close()
  }
  // The project's first job on the wait list, its 19 later turns by priority (project-turns.ts).
  assert.equal(await inspect.queue.getJobCountByTypes('wait', 'prioritized'), 20)

  const first = startWriter()
  // Kill while jobs are being stored: some rows are in, and the writer holds active jobs.
  const storedAtKill = await waitFor(
    'the writer to be mid-drain',
    async () => {
      const stored = await countSpans(database.db, 'project-crash')
      return stored > 0 && (await inspect.queue.getActiveCount()) > 0 && stored
    },
    30_000,
    5,
  )
  first.kill('SIGKILL')
  await once(first, 'exit')
  const killedAt = Date.now()
  assert.ok(storedAtKill < total, 'the kill landed before the queue was drained')
  assert.ok((await inspect.queue.getActiveCount()) > 0, 'the killed writer left active jobs behind')

  const second = startWriter()
  await waitFor('every span to be stored', async () => (await countSpans(database.db, 'project-crash')) === total, 60_000, 100)
  await waitFor('every job to complete', async () => (await inspect.queue.getCompletedCount()) === 20, 10_000)
  // The killed writer's jobs waited for their lock (WRITER_LOCK_DURATION_MS) to lapse and the next
  // stalled check (WRITER_STALLED_INTERVAL_MS): about 10 s, where BullMQ's defaults took up to 90.
  const recoveredInMs = Date.now() - killedAt
  assert.ok(recoveredInMs < 20_000, `the killed writer's jobs were stored ${recoveredInMs} ms after the kill`)
  const { rows } = await sql<{ distinct_spans: string }>`
    select count(distinct (trace_id, span_id))::text as distinct_spans from spans where project_id = 'project-crash'`.execute(database.db)
  assert.equal(rows[0]?.distinct_spans, String(total))
  assert.equal(await inspect.queue.getFailedCount(), 0)

  // SIGTERM: the writer shuts down gracefully and exits 0.
  second.kill('SIGTERM')
  const [code] = await once(second, 'exit')
  assert.equal(code, 0)
})
