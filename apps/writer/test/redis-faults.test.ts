import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { testEnvironment } from '@tracewell/config'
import { sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { createBullMqSpanBatchProducer, spanBatchConnectionName, type SpanBatchProducer } from '@tracewell/queue'
import { seededRandom, startTcpProxy, type TcpProxy } from '@tracewell/test-support'
import { Redis } from 'ioredis'
import { startSpanBatchWorker, type SpanBatchWorker } from '../src/index.ts'
import { enqueueSpans, makeSpans, openQueue, testPrefix, waitFor } from './helpers.ts'

// A span whose enqueue resolved (ingest's 200) must be stored exactly once, however the Redis
// connections of ingest and writer break: ioredis resends the commands that were in flight, and
// Redis may already have executed them. Real faults: a proxy that resets connections at random,
// and CLIENT KILL of the connections by name, while requests keep arriving.

const { REDIS_URL } = testEnvironment()
const redisTarget = { host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) }
const quiet = { info() {}, warn() {}, error() {} }

/** Kills every client connection of Redis with the given name (this process's own: the name holds its pid); returns how many. */
async function killConnectionsNamed(admin: Redis, name: string): Promise<number> {
  const list = await admin.client('LIST')
  const ids = String(list)
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /\bid=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined)
  for (const id of ids) await admin.client('KILL', 'ID', id).catch(() => {})
  return ids.length
}

/** Sends small requests from `concurrency` loops for `durationMs`; returns the span ids acknowledged. */
/**
 * Sends for `durationMs`, and on (up to five times as long) until `minimum` spans were
 * acknowledged: on a loaded machine four seconds under faults may acknowledge too few to prove
 * anything.
 */
async function sendUnderFaults(producer: SpanBatchProducer, projectId: string, durationMs: number, concurrency: number, minimum = 600): Promise<{ acknowledged: string[]; refused: number }> {
  const acknowledged: string[] = []
  let refused = 0
  const started = Date.now()
  const sending = () => Date.now() - started < durationMs || (acknowledged.length < minimum && Date.now() - started < 5 * durationMs)
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      while (sending()) {
        const spans = makeSpans(1 + (loop % 3))
        try {
          await enqueueSpans(producer, projectId, spans)
          acknowledged.push(...spans.map((span) => span.spanId))
        } catch {
          refused++ // a 503: the client resends it; not acknowledged, so not counted
          await sleep(5)
        }
      }
    }),
  )
  return { acknowledged, refused }
}

async function assertStoredExactlyOnce(database: TestDatabase, projectId: string, acknowledged: string[]): Promise<void> {
  const { rows } = await sql<{ span_id: string; copies: string }>`
    select span_id, count(*) as copies from spans where project_id = ${projectId} group by span_id`.execute(database.db)
  const copies = new Map(rows.map((row) => [row.span_id, Number(row.copies)]))
  const missing = acknowledged.filter((id) => !copies.has(id))
  assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged spans are not stored`)
  assert.deepEqual(
    rows.filter((row) => Number(row.copies) !== 1),
    [],
    'no span is stored twice',
  )
}

describe('acknowledged spans survive broken Redis connections (proxy resets and CLIENT KILL)', { timeout: 540_000 }, () => {
  let database: TestDatabase
  let proxy: TcpProxy
  let admin: Redis

  before(async () => {
    database = await createTestDatabase()
    proxy = await startTcpProxy(redisTarget)
    admin = new Redis(REDIS_URL)
  })
  after(async () => {
    await proxy.close()
    admin.disconnect()
    await database.drop()
  })

  async function runScenario(options: { producerThroughProxy: boolean; writerThroughProxy: boolean; killName: string; seed: number }) {
    const prefix = testPrefix()
    const projectId = `faults-${options.seed}`
    const proxied = `redis://127.0.0.1:${proxy.port}`
    const inspect = openQueue(REDIS_URL, prefix)
    const producer = createBullMqSpanBatchProducer({
      redis: options.producerThroughProxy ? proxied : REDIS_URL,
      prefix,
      maxBacklogSpans: 10_000_000,
      maxBacklogBytes: 1 << 30,
      maxSpansPerJob: 50,
    })
    let writer: SpanBatchWorker | undefined
    try {
      writer = startSpanBatchWorker({
        db: database.db,
        redis: options.writerThroughProxy ? proxied : REDIS_URL,
        prefix,
        concurrency: 4,
        lockDurationMs: 2_000,
        stalledIntervalMs: 1_000,
        logger: quiet,
      })
      const random = seededRandom(options.seed)
      let cuts = 0
      let kills = 0
      const faults = setInterval(() => {
        cuts += proxy.cut(0.2, random)
        if (random() < 0.5) void killConnectionsNamed(admin, options.killName).then((killed) => (kills += killed))
      }, 40)
      let sent
      try {
        sent = await sendUnderFaults(producer, projectId, 4_000, 16)
      } finally {
        clearInterval(faults)
      }
      assert.ok(cuts + kills >= 10, `faults injected: ${cuts} cuts, ${kills} kills`)
      assert.ok(sent.acknowledged.length > 500, `${sent.acknowledged.length} spans acknowledged, ${sent.refused} refused`)

      // Jobs that failed several times while the connections were being cut wait out BullMQ's
      // exponential backoff (1, 2, 4, … s) before their next attempt: draining takes up to a minute
      // or two after the faults stop, with nothing lost or failed, which is what is checked.
      await waitFor(
        'the queue to drain',
        async () => {
          const { wait = 0, active = 0, delayed = 0, prioritized = 0, failed = 0 } = await inspect.queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'failed')
          return wait + active + delayed + prioritized === 0 || failed > 0
        },
        150_000,
        100,
      )
      assert.equal(await inspect.queue.getFailedCount(), 0, `failed: ${JSON.stringify((await inspect.queue.getFailed()).map((job) => job.failedReason))}`)
      await assertStoredExactlyOnce(database, projectId, sent.acknowledged)
    } finally {
      await writer?.close()
      await producer.close()
      await inspect.close()
    }
  }

  // Longer than the suite's default timeout: the drain above may take up to 150 s.
  const scenarioTimeout = { timeout: 240_000 }

  test("ingest's connection: every acknowledged span is stored once and nothing fails", scenarioTimeout, async () => {
    await runScenario({ producerThroughProxy: true, writerThroughProxy: false, killName: spanBatchConnectionName('producer'), seed: 14 })
  })

  test("the writer's connections: every acknowledged span is stored once and nothing fails", scenarioTimeout, async () => {
    await runScenario({ producerThroughProxy: false, writerThroughProxy: true, killName: spanBatchConnectionName('writer'), seed: 41 })
  })
})
