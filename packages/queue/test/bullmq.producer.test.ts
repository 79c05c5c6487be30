import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import {
  createBullMqSpanBatchProducer,
  createSpanBatchQueueConnection,
  defaultSpanBatchJobOptions,
  QueueBacklogFullError,
  QueueNames,
  QueueUnavailableError,
  deletePayload,
  InvalidSpanBatchJobError,
  payloadTtlSeconds,
  orphanPayloadAgeMs,
  spanBatchJobName,
  spanCountOf,
  sweepOrphanPayloads,
  type ProjectSpans,
  type KeyedSpanBatchJob,
  type ReferencedSpanBatchJob,
  type SpanBatchJob,
} from '../src/index.ts'
import { keyedJob, newPayloadId, payloadKeyOf, writePayloads } from '../src/span-batch.payload.ts'
import { acceptedTraces } from '@tracewell/test-support'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { enqueueSpans, makeSpans, OwnRedis, spansOfJob } from './helpers.ts'

const { REDIS_URL } = loadConfig(TestEnvironmentSchema)

/** Reads the queue the way the writer would, through a separate connection. */
function inspector(redisUrl: string, prefix: string) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null })
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, { connection, prefix })
  return {
    queue,
    connection,
    /** Every waiting job (a project's first turn, or a later one by priority) with its spans, read and decoded as the writer reads them. */
    async waitingJobs(): Promise<Array<{ data: SpanBatchJob; batches: ProjectSpans[] }>> {
      const jobs = await queue.getJobs(['wait', 'prioritized'], 0, -1)
      return Promise.all(jobs.map(async (job) => ({ data: job.data, batches: await spansOfJob(connection, job.data) })))
    },
    async close() {
      await queue.close()
      connection.disconnect()
    },
  }
}

const spanIdsOf = (jobs: Array<{ batches: ProjectSpans[] }>) => jobs.flatMap((job) => job.batches.flatMap((batch) => batch.spans.map((span) => span.spanId)))

describe('BullMQ span-batch producer (shared Redis)', () => {
  const prefix = testQueuePrefix()
  const inspect = inspector(REDIS_URL, prefix)

  after(async () => {
    await inspect.queue.obliterate({ force: true })
    await inspect.close()
  })

  test('groups 50 concurrent requests into few jobs, answering each only once its spans are in Redis', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
    try {
      const requests = Array.from({ length: 50 }, (_, i) => ({ projectId: `project-${i % 3}`, spans: makeSpans(3) }))
      const seenInRedis = await Promise.all(
        requests.map(async (request) => {
          await enqueueSpans(producer, request.projectId, request.spans)
          // Right after the promise resolves, the request's spans must already be in Redis.
          const stored = new Set(spanIdsOf(await inspect.waitingJobs()))
          return request.spans.every((span) => stored.has(span.spanId))
        }),
      )
      assert.ok(seenInRedis.every(Boolean), 'every request found its spans in Redis when its promise resolved')

      const jobs = await inspect.waitingJobs()
      assert.ok(jobs.length <= 5, `expected a handful of jobs for 50 requests, got ${jobs.length}`)
      const ids = spanIdsOf(jobs)
      assert.equal(ids.length, 150)
      assert.deepEqual(new Set(ids), new Set(requests.flatMap((request) => request.spans.map((span) => span.spanId))))
      for (const job of jobs) {
        assert.equal(job.data.version, 3, 'bodies travel by reference, in a hash')
        assert.equal(spanCountOf(job.data), job.batches.reduce((sum, batch) => sum + batch.spans.length, 0), 'the envelope counts the spans of its bodies')
      }
      for (const request of requests) {
        const batch = jobs.flatMap((job) => job.batches).find((candidate) => candidate.spans.some((span) => span.spanId === request.spans[0]?.spanId))
        assert.equal(batch?.projectId, request.projectId)
        assert.deepEqual(batch?.spans.map((span) => span.spanId), request.spans.map((span) => span.spanId), 'each request is one body, whole')
      }
      const [stored] = await inspect.queue.getJobs(['wait', 'prioritized'], 0, 0)
      assert.equal(stored?.opts.attempts, defaultSpanBatchJobOptions.attempts)
      assert.deepEqual(stored?.opts.backoff, defaultSpanBatchJobOptions.backoff)
      const data = stored?.data as KeyedSpanBatchJob
      assert.ok((await inspect.connection.ttl(data.payloadKey)) > payloadTtlSeconds - 60, 'the payload carries its orphan-reclaiming TTL')
      assert.ok(stored?.id && data.payloadKey.endsWith(`:payload:${stored.id}`), 'the job id is the payload id')
      assert.equal(data.requests[0]?.bytes, acceptedTraces('x', requests[0]!.spans).body.byteLength, 'each request records its body size')
    } finally {
      await producer.close()
    }
  })

  test('keeps requests whole, packing them into jobs of at most maxSpansPerJob spans (or one larger request alone)', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 10 })
    try {
      const requests = [...Array.from({ length: 10 }, () => makeSpans(4)), makeSpans(25)]
      await Promise.all(requests.map((spans, i) => enqueueSpans(producer, `project-${i % 2}`, spans)))
      const jobs = await inspect.waitingJobs()
      const sizes = jobs.map((job) => spanCountOf(job.data)).sort((a, b) => a - b)
      assert.deepEqual(sizes, [4, 4, 8, 8, 8, 8, 25], 'each project’s 4-span requests two by two, the 25-span request in a job of its own')
      const ids = spanIdsOf(jobs)
      assert.equal(ids.length, 65)
      assert.equal(new Set(ids).size, 65)
    } finally {
      await producer.close()
    }
  })

  test('with a linger, one-span requests arriving apart are one job', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000, lingerMs: 300 })
    try {
      const answered: Array<Promise<void>> = []
      for (let i = 0; i < 5; i++) {
        answered.push(enqueueSpans(producer, 'project-linger', makeSpans(1)))
        await sleep(20)
      }
      await Promise.all(answered)
      const jobs = await inspect.waitingJobs()
      assert.deepEqual(jobs.map((job) => spanCountOf(job.data)), [5], 'five requests 20 ms apart, within the linger: one job')
      assert.equal(new Set(spanIdsOf(jobs)).size, 5)
    } finally {
      await producer.close()
    }
  })

  test('a completed job\'s payload is deleted by deletePayload, and only then', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 10 })
    try {
      await enqueueSpans(producer, 'project-a', makeSpans(2))
      const [job] = await inspect.waitingJobs()
      const data = job?.data as KeyedSpanBatchJob
      assert.equal(await inspect.connection.exists(data.payloadKey), 1)
      await deletePayload(inspect.connection, data)
      assert.equal(await inspect.connection.exists(data.payloadKey), 0)
      assert.deepEqual(await spansOfJob(inspect.connection, data), [], 'a copy of a stored job stores nothing')

      // Without the marker of a stored job, a missing payload is an error no retry can fix.
      const lost = { ...data, payloadKey: `${data.payloadKey}-never-written` }
      await assert.rejects(spansOfJob(inspect.connection, lost), (error: Error) => {
        assert.ok(error instanceof InvalidSpanBatchJobError)
        assert.match(error.message, /payload .*-never-written is missing/)
        return true
      })
    } finally {
      await producer.close()
    }
  })

  test('bodies and jobs written twice (as ioredis resends them) are stored once', async () => {
    await inspect.queue.obliterate({ force: true })
    const spans = makeSpans(3)
    const request = { ...acceptedTraces('project-a', spans), encoding: 'json' as const, spans: spans.length }
    const id = newPayloadId()
    const data = keyedJob(payloadKeyOf(prefix, id), [request, request])
    for (let i = 0; i < 2; i++) {
      await writePayloads(inspect.connection, [{ key: data.payloadKey, bodies: [request.body, request.body] }])
      await inspect.queue.add(spanBatchJobName, data, { jobId: id })
    }
    assert.equal(await inspect.connection.hlen(data.payloadKey), 2)
    assert.equal(await inspect.queue.getWaitingCount(), 1)
    const batches = await spansOfJob(inspect.connection, data)
    assert.deepEqual(batches.map((batch) => batch.spans.length), [3, 3])
  })

  test('reads an older ingest’s list payload whose RPUSH was resent, and refuses one that is torn', async () => {
    const body = acceptedTraces('project-a', makeSpans(2)).body
    const other = acceptedTraces('project-b', makeSpans(1)).body
    const job: ReferencedSpanBatchJob = {
      version: 2,
      payloadKey: `${prefix}:span-batches:payload:${randomUUID()}`,
      requests: [
        { projectId: 'project-a', encoding: 'json', spans: 2 },
        { projectId: 'project-b', encoding: 'json', spans: 1 },
      ],
    }
    await inspect.connection.rpush(job.payloadKey, body, other, body, other)
    assert.deepEqual((await spansOfJob(inspect.connection, job)).map((batch) => [batch.projectId, batch.spans.length]), [
      ['project-a', 2],
      ['project-b', 1],
    ])
    await inspect.connection.rpush(job.payloadKey, body)
    await assert.rejects(spansOfJob(inspect.connection, job), /holds 5 of 2 bodies/)
  })

  test('refuses work once the waiting bytes reach their bound, whatever the span count', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 64 * 1024, maxSpansPerJob: 50, backlogRefreshMs: 20 })
    try {
      const large = () => makeSpans(1).map((span) => ({ ...span, attributes: { big: { stringValue: 'x'.repeat(40 * 1024) } } }))
      await enqueueSpans(producer, 'project-a', large())
      await enqueueSpans(producer, 'project-a', large())
      for (let i = 0; i < 100 && producer.backlogBytes() < 64 * 1024; i++) await sleep(20)
      assert.ok(producer.backlogBytes() >= 80 * 1024, `measured ${producer.backlogBytes()} bytes`)
      await assert.rejects(enqueueSpans(producer, 'project-a', makeSpans(1)), (error: Error) => {
        assert.ok(error instanceof QueueBacklogFullError)
        assert.match(error.message, /bytes waiting/)
        return true
      })
      await inspect.queue.drain()
      for (let i = 0; i < 100 && producer.backlogBytes() > 0; i++) await sleep(20)
      await enqueueSpans(producer, 'project-a', makeSpans(1))
    } finally {
      await producer.close()
    }
  })

  test('the orphan sweep deletes old payloads without a job, and nothing else', async () => {
    await inspect.queue.obliterate({ force: true })
    const body = acceptedTraces('project-a', makeSpans(1)).body
    const old = Date.now() - orphanPayloadAgeMs - 1_000
    const orphanId = `${old}-${randomUUID()}`
    const keptId = `${old}-${randomUUID()}`
    const youngId = newPayloadId()
    for (const id of [orphanId, keptId, youngId]) await writePayloads(inspect.connection, [{ key: payloadKeyOf(prefix, id), bodies: [body] }])
    await inspect.queue.add(spanBatchJobName, keyedJob(payloadKeyOf(prefix, keptId), [{ projectId: 'project-a', body, encoding: 'json', spans: 1 }]), { jobId: keptId })

    assert.equal(await sweepOrphanPayloads(inspect.connection, [{ index: 0, prefix }]), 1)
    assert.equal(await inspect.connection.exists(payloadKeyOf(prefix, orphanId)), 0, 'the orphan is gone')
    assert.equal(await inspect.connection.exists(payloadKeyOf(prefix, keptId)), 1, 'a payload whose job waits stays')
    assert.equal(await inspect.connection.exists(payloadKeyOf(prefix, youngId)), 1, 'a payload whose job may be being added stays')
  })

  test('refuses work with QueueBacklogFullError once the waiting backlog reaches the bound', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 100, maxBacklogBytes: 1 << 30, maxSpansPerJob: 50, backlogRefreshMs: 20 })
    try {
      await enqueueSpans(producer, 'project-a', makeSpans(50))
      await enqueueSpans(producer, 'project-a', makeSpans(50))
      for (let i = 0; i < 100 && producer.backlog() < 100; i++) await sleep(20)
      assert.equal(producer.backlog(), 100)
      await assert.rejects(enqueueSpans(producer, 'project-a', makeSpans(1)), QueueBacklogFullError)
      assert.equal(await inspect.queue.getJobCountByTypes('wait', 'prioritized'), 2, 'the refused spans were not queued')

      // Once the writer drains the queue, work is accepted again.
      await inspect.queue.drain()
      for (let i = 0; i < 100 && producer.backlog() > 0; i++) await sleep(20)
      assert.equal(producer.backlog(), 0)
      await enqueueSpans(producer, 'project-a', makeSpans(1))
      await producer.ping()
    } finally {
      await producer.close()
    }
  })
  test('refuses a project over its share of the backlog while another project keeps being accepted', async () => {
    await inspect.queue.obliterate({ force: true })
    const producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 50, backlogRefreshMs: 20 })
    try {
      await enqueueSpans(producer, 'project-trickle', makeSpans(1))
      let refused: unknown
      for (let i = 0; i < 40 && refused === undefined; i++) {
        await enqueueSpans(producer, 'project-flood', makeSpans(50)).catch((error: unknown) => (refused = error))
        for (let wait = 0; wait < 50 && producer.backlog() < (i + 1) * 50; wait++) await sleep(10)
      }
      assert.ok(refused instanceof QueueBacklogFullError, 'the flooding project was refused')
      assert.match(refused.message, /^project project-flood holds more than its share of the queue backlog \(\d+ of 500 spans\)$/)
      assert.ok(producer.backlog() < 1_000, `refused at its share, before the queue was full (${producer.backlog()} spans waiting)`)
      // The other project is not refused: the queue still has room, and it holds almost none of it.
      for (let i = 0; i < 5; i++) await enqueueSpans(producer, 'project-trickle', makeSpans(2))
    } finally {
      await producer.close()
    }
  })
})

describe('BullMQ span-batch producer when Redis goes away (own redis-server)', () => {
  const redis = new OwnRedis(6391)
  const prefix = testQueuePrefix()

  before(async () => {
    await redis.kill()
  })
  after(async () => {
    await redis.kill()
  })

  test('answers QueueUnavailableError within a second while Redis is down, and recovers when it returns', async () => {
    // Started while Redis is down: the producer must still come up once Redis does.
    const producer = createBullMqSpanBatchProducer({ redis: redis.url, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 100 })
    try {
      let started = performance.now()
      await assert.rejects(enqueueSpans(producer, 'project-a', makeSpans(2)), QueueUnavailableError)
      assert.ok(performance.now() - started < 1_000)
      await assert.rejects(producer.ping(), QueueUnavailableError)

      await redis.start()
      const enqueueEventually = async () => {
        for (let i = 0; ; i++) {
          try {
            return await enqueueSpans(producer, 'project-a', makeSpans(2))
          } catch (error) {
            if (!(error instanceof QueueUnavailableError) || i > 100) throw error
            await sleep(50)
          }
        }
      }
      await enqueueEventually()

      await redis.kill()
      // Concurrent requests, some possibly mid-write when the server died: none may hang.
      started = performance.now()
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => enqueueSpans(producer, 'project-a', makeSpans(2))))
      assert.ok(performance.now() - started < 1_000, `took ${performance.now() - started} ms`)
      for (const outcome of outcomes) {
        assert.equal(outcome.status, 'rejected')
        assert.ok(outcome.reason instanceof QueueUnavailableError)
      }

      await redis.start()
      await enqueueEventually()
      await producer.ping()
      const check = createSpanBatchQueueConnection(redis.url, 'worker')
      const queue = new Queue(QueueNames.spanBatches, { connection: check, prefix })
      assert.equal(await queue.getWaitingCount(), 1, 'the job written after recovery is in the restarted (empty) Redis')
      await queue.close()
      check.disconnect()
    } finally {
      await producer.close()
    }
  })
})
