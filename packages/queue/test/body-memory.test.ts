import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { markAsUntransferable } from 'node:worker_threads'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { acceptedTraces } from '@tracewell/test-support'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { createBullMqSpanBatchProducer, QueueNames, releaseBody, withJobBodies, type QueuedBody, type SpanBatchJob } from '../src/index.ts'
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

describe('withJobBodies', () => {
  const prefix = testQueuePrefix()
  const redis = new Redis(REDIS_URL)
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
  after(async () => {
    await producer.close()
    await queue.obliterate({ force: true })
    await queue.close()
    redis.disconnect()
  })

  /** A queued job of two large bodies (~100 KB each, so Buffers of their own when read back). */
  async function queuedJob(): Promise<{ job: SpanBatchJob; bodies: Buffer[] }> {
    await queue.obliterate({ force: true })
    const requests = [acceptedTraces('project-a', makeSpans(150)), acceptedTraces('project-a', makeSpans(150))]
    await Promise.all(requests.map((traces) => producer.enqueue({ ...traces, body: Buffer.from(traces.body) })))
    const [job, ...others] = await queue.getJobs(['wait', 'prioritized'], 0, -1)
    assert.ok(job && others.length === 0, 'one job for both requests')
    return { job: job.data, bodies: requests.map((traces) => Buffer.from(traces.body)) }
  }

  test('hands over every body as ingest queued it, then frees them; the payload in Redis stays', async () => {
    const { job, bodies } = await queuedJob()
    let kept: QueuedBody[] = []
    const handed = await withJobBodies(redis, job, async (queued) => {
      kept = queued
      return queued.map(({ projectId, encoding, body }) => ({ projectId, encoding, body: Buffer.from(body) }))
    })
    assert.deepEqual(handed.map(({ projectId, encoding }) => [projectId, encoding]).sort(), [
      ['project-a', 'json'],
      ['project-a', 'json'],
    ])
    assert.deepEqual(handed.map(({ body }) => body.toString()).sort(), bodies.map((body) => body.toString()).sort())
    // The bodies outlived the call only as empty views: nothing can be read from freed memory.
    assert.deepEqual(kept.map(({ body }) => [body.length, detached(body)]), [
      [0, true],
      [0, true],
    ])
    // A retry (or a replay) of the same job reads its bodies from Redis again.
    const again = await withJobBodies(redis, job, async (queued) => queued.reduce((bytes, { body }) => bytes + body.length, 0))
    assert.equal(again, bodies[0]!.length + bodies[1]!.length)
  })

  test('frees the bodies also when storing fails, and passes the failure on', async () => {
    const { job } = await queuedJob()
    let kept: QueuedBody[] = []
    await assert.rejects(
      withJobBodies(redis, job, async (queued) => {
        kept = queued
        throw new Error('database down')
      }),
      /database down/,
    )
    assert.deepEqual(kept.map(({ body }) => body.length), [0, 0])
  })
})
