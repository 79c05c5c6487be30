import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, describe, test } from 'node:test'
import { markAsUntransferable } from 'node:worker_threads'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { acceptedTraces } from '@tracewell/test-support'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { createBullMqSpanBatchProducer, QueueNames, releaseBody, withQueuedSpans, type QueuedSpans, type SpanBatchJob } from '../src/index.ts'
import { makeSpans } from './helpers.ts'

// Bodies are freed by their last user (body-memory.ts): ingest once enqueue has settled, the
// writer once a job is stored. Freed too early, spans would be lost; freed carelessly, memory
// other Buffers share would be wiped.

const { REDIS_URL } = loadConfig(TestEnvironmentSchema)
const detached = (bytes: Uint8Array) => (bytes.buffer as ArrayBuffer).detached

describe('releaseBody', () => {
  test('frees a Buffer that owns its whole ArrayBuffer: it then reads as empty', () => {
    const body = Buffer.concat([Buffer.alloc(40_000, 'a'), Buffer.alloc(40_000, 'b')])
    releaseBody(body)
    assert.equal(body.length, 0)
    assert.equal(detached(body), true)
  })

  test('leaves a small Buffer alone: it is a slice of the pool other Buffers share', () => {
    const body = Buffer.concat([Buffer.from('{"resourceSpans":[]}')])
    const neighbour = Buffer.allocUnsafe(16).fill(7) // very likely from the same pool
    releaseBody(body)
    assert.equal(body.toString(), '{"resourceSpans":[]}')
    assert.equal(detached(body), false)
    assert.deepEqual([...neighbour], Array(16).fill(7))
  })

  test('leaves a Buffer Node will not let go of (untransferable) alone, without throwing', () => {
    const body = Buffer.concat([Buffer.alloc(40_000, 'a'), Buffer.alloc(40_000, 'b')])
    markAsUntransferable(body.buffer)
    releaseBody(body)
    assert.equal(body.length, 80_000)
    assert.equal(body[79_999], 'b'.charCodeAt(0))
  })

  test('leaves a view into a larger buffer alone', () => {
    const whole = Buffer.alloc(100_000, 'x')
    const view = whole.subarray(10, 50_000)
    releaseBody(view)
    assert.equal(view.length, 49_990)
    assert.equal(detached(whole), false)
  })
})

describe('withQueuedSpans', () => {
  const prefix = `test-${randomUUID()}`
  const redis = new Redis(REDIS_URL)
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  const producer = createBullMqSpanBatchProducer({ redisUrl: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
  after(async () => {
    await producer.close()
    await queue.obliterate({ force: true })
    await queue.close()
    redis.disconnect()
  })

  /** A queued job of two large bodies (~100 KB each, so Buffers of their own when read back). */
  async function queuedJob(): Promise<{ job: SpanBatchJob; spanIds: string[] }> {
    await queue.obliterate({ force: true })
    const requests = [makeSpans(150), makeSpans(150)]
    await Promise.all(requests.map((spans) => producer.enqueue(acceptedTraces('project-a', spans))))
    const [job, ...others] = await queue.getJobs(['wait'], 0, -1)
    assert.ok(job && others.length === 0, 'one job for both requests')
    return { job: job.data, spanIds: requests.flat().map((span) => span.spanId) }
  }

  test('hands over every span, then frees the bodies it read; the payload in Redis stays', async () => {
    const { job, spanIds } = await queuedJob()
    let kept: QueuedSpans[] = []
    const stored = await withQueuedSpans(redis, job, async (sources) => {
      kept = sources
      return sources.flatMap((source) => source.spans().map((span) => span.spanId))
    })
    assert.deepEqual(stored.sort(), [...spanIds].sort())
    // The sources outlived the call, their bodies did not: decoding one now fails loudly rather
    // than yielding spans from freed memory.
    assert.throws(() => kept[0]?.spans(), /no longer decodes/)
    // A retry (or a replay) of the same job reads its bodies from Redis again.
    const again = await withQueuedSpans(redis, job, async (sources) => sources.reduce((count, source) => count + source.spans().length, 0))
    assert.equal(again, 300)
  })

  test('frees the bodies also when storing fails, and passes the failure on', async () => {
    const { job } = await queuedJob()
    let kept: Array<() => number> = []
    await assert.rejects(
      withQueuedSpans(redis, job, async (sources) => {
        kept = sources.map((source) => () => source.spans().length)
        throw new Error('database down')
      }),
      /database down/,
    )
    assert.throws(() => kept[0]?.(), /no longer decodes/)
  })
})
