import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { once } from 'node:events'
import { after, before, describe, test } from 'node:test'
import { loadConfig, testEnvironment, WriterConfigSchema } from '@tracewell/config'
import { countSpans, findTraceSpans, sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { createBullMqSpanBatchProducer, QueueNames, type KeyedSpanBatchJob, type ReferencedSpanBatchJob, type SpanBatchProducer } from '@tracewell/queue'
import { UnrecoverableError, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { Registry } from 'prom-client'
import { acceptedTraces } from '@tracewell/test-support'
import { decodeProtobufTraces, type SpanRecord } from '@tracewell/otlp'
import { buildApp, inProcessSpanBatchProcessor, SpanPricer, startSpanBatchWorker } from '../src/index.ts'
import { enqueueRequestBody, enqueueSpans, fixtureSpans, makeSpans, openQueue, testPrefix, waitFor, producerConnected } from './helpers.ts'
import { summaryBacklog } from '@tracewell/db'

const { REDIS_URL } = testEnvironment()
const run = promisify(execFile)
const replayPath = fileURLToPath(new URL('../src/bin/replay-failed.ts', import.meta.url))
const quiet = { info() {}, warn() {}, error() {} }

describe('span-batch worker (real Redis and Postgres)', () => {
  let database: TestDatabase
  const prefix = testPrefix()
  const inspect = openQueue(REDIS_URL, prefix)
  let producer: SpanBatchProducer

  before(async () => {
    database = await createTestDatabase()
    producer = createBullMqSpanBatchProducer({ redis: REDIS_URL, prefix, maxBacklogSpans: 1_000_000, maxBacklogBytes: 1 << 30, maxSpansPerJob: 2_000 })
    await producerConnected(producer)
  })
  after(async () => {
    await producer.close()
    await inspect.close()
    await database.drop()
  })

  test('stores a fixture batch from producer through Redis into Postgres with every column right', async () => {
    const registry = new Registry()
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 2, logger: quiet, metrics: registry })
    try {
      await enqueueSpans(producer, 'project-fixture', fixtureSpans)
      const [first, second] = fixtureSpans
      assert.ok(first && second)
      const stored = await waitFor('the fixture spans', async () => {
        const spans = await findTraceSpans(database.db, 'project-fixture', first.traceId)
        return spans.length === fixtureSpans.filter((span) => span.traceId === first.traceId).length && spans
      })
      const span = stored.find((candidate) => candidate.spanId === first.spanId)
      assert.deepEqual(span && { ...span, receivedAt: undefined }, {
        traceId: first.traceId,
        spanId: first.spanId,
        parentSpanId: first.parentSpanId,
        name: first.name,
        kind: first.kind,
        startTime: '2024-11-20T21:25:30.275984Z',
        endTime: '2024-11-20T21:25:31.083383Z',
        startTimeUnixNano: first.startTimeUnixNano,
        endTimeUnixNano: first.endTimeUnixNano,
        durationNs: first.durationNs,
        traceState: first.traceState,
        status: { code: first.statusCode, message: first.statusMessage },
        serviceName: 'support-bot',
        serviceVersion: first.serviceVersion,
        scopeName: first.scopeName,
        scopeVersion: first.scopeVersion,
        llmVendor: 'openai',
        llmModel: 'gpt-4o',
        llmResponseModel: null,
        llmRequestType: 'chat',
        inputTokens: 14,
        outputTokens: 2,
        totalTokens: 16,
        cachedInputTokens: null,
        cacheWriteInputTokens: null,
        reasoningTokens: null,
        sessionId: null,
        userId: null,
        // gpt-4o from the price table: 14 input tokens at $2.50/M, 2 output at $10/M.
        inputCostUsd: 0.000035,
        outputCostUsd: 0.00002,
        totalCostUsd: 0.000055,
        costSource: 'price_table',
        // A plain (not streamed) Langtrace call: the provider's counts.
        tokensEstimated: false,
        attributes: first.attributes,
        resourceAttributes: first.resourceAttributes,
        events: first.events,
        links: first.links,
        receivedAt: undefined,
      })
      const row = await sql<{ project_id: string; duration_ns: string }>`
        select project_id, duration_ns from spans where span_id = ${first.spanId}`.execute(database.db)
      assert.deepEqual(row.rows, [{ project_id: 'project-fixture', duration_ns: '807399000' }])

      const metrics = await registry.metrics()
      assert.match(metrics, new RegExp(`tracewell_writer_spans_written_total ${fixtureSpans.length}\\b`))
      assert.match(metrics, /tracewell_writer_batch_duration_seconds_count 1\b/)
    } finally {
      await writer.close()
    }
  })

  test('the same batch delivered twice makes no duplicate rows', async () => {
    const spans = makeSpans(300)
    const batches = [{ projectId: 'project-dup', spans }]
    const process = inProcessSpanBatchProcessor(database.db, new SpanPricer({ db: database.db, metrics: new Registry() }))
    assert.deepEqual(await process(batches), { inserted: 300, duplicates: 0 })
    assert.deepEqual(await process(batches), { inserted: 0, duplicates: 300 })

    // And through the queue: a client retry enqueues the same spans again.
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 2, logger: quiet })
    try {
      await enqueueSpans(producer, 'project-dup', spans)
      await enqueueSpans(producer, 'project-dup', spans)
      await waitFor('both jobs to complete', async () => (await inspect.queue.getCompletedCount()) >= 3)
      assert.equal(await countSpans(database.db, 'project-dup'), 300)
      // Each job's COPY met stored spans and was rolled back; its bodies, freed as the COPY
      // encoded them, were read again for the statements, which skipped every span.
      const jobs = (await inspect.queue.getCompleted()).filter((job) => (job.data as KeyedSpanBatchJob).requests.some((request) => request.projectId === 'project-dup'))
      assert.deepEqual(jobs.map((job) => job.returnvalue), [{ inserted: 0, duplicates: 300 }, { inserted: 0, duplicates: 300 }])
    } finally {
      await writer.close()
    }
  })

  test('jobs an older ingest queued as request bodies, JSON and protobuf, are stored as those of today’s', async () => {
    const protobuf = readFileSync(new URL('../../../test-fixtures/otel-js-otlp-proto-1.bin', import.meta.url))
    const fromProtobuf = decodeProtobufTraces(protobuf).spans
    const fromJson = makeSpans(6)
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 2, logger: quiet })
    try {
      await enqueueRequestBody(producer, 'project-older-json', fromJson)
      await producer.enqueue({ projectId: 'project-older-protobuf', spanCount: fromProtobuf.length, spans: null, body: protobuf, bodyEncoding: 'protobuf' })
      await enqueueSpans(producer, 'project-records', fromJson)
      await waitFor('the spans', async () => (await countSpans(database.db, 'project-older-json')) === 6 && (await countSpans(database.db, 'project-records')) === 6 && (await countSpans(database.db, 'project-older-protobuf')) === fromProtobuf.length)
      const stored = async (projectId: string, spans: SpanRecord[]) =>
        (await Promise.all([...new Set(spans.map((span) => span.traceId))].map((traceId) => findTraceSpans(database.db, projectId, traceId)))).flat().map(({ receivedAt: _receivedAt, ...span }) => span)
      assert.deepStrictEqual(await stored('project-older-json', fromJson), await stored('project-records', fromJson))
      const [first] = await stored('project-older-protobuf', fromProtobuf)
      assert.equal(first?.name, fromProtobuf.find((span) => span.spanId === first?.spanId)?.name)
    } finally {
      await writer.close()
    }
  })

  test('attribute keys that JSON writes with escapes arrive intact through Redis', async () => {
    // V8's JSON.parse can corrupt such keys (see @tracewell/json-text); the writer reads the
    // queued records with parseJsonText.
    const keys = ['k\\', 'k\t', 'k"', 'k\u001c', 'plain.key']
    const spans = makeSpans(keys.length * 4).map((span, i) => ({ ...span, attributes: { [keys[i % keys.length]!]: { intValue: `${i}` } } }))
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    try {
      await enqueueSpans(producer, 'project-escaped-keys', spans)
      await waitFor('the spans', async () => (await countSpans(database.db, 'project-escaped-keys')) === spans.length)
      for (const span of spans) {
        const [stored] = await findTraceSpans(database.db, 'project-escaped-keys', span.traceId)
        assert.deepStrictEqual(stored?.attributes, span.attributes)
      }
    } finally {
      await writer.close()
    }
  })

  test('a job with a malformed envelope goes straight to the failed set', async () => {
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    try {
      const job = await inspect.queue.add('span-batch', { version: 2, batches: 'nope' } as never, { attempts: 12, backoff: { type: 'exponential', delay: 1_000 } })
      const failed = await waitFor('the poison job to fail', async () => {
        const state = await inspect.queue.getJobState(job.id as string)
        return state === 'failed' && (await inspect.queue.getJob(job.id as string))
      })
      assert.equal(failed.attemptsMade, 1, 'no retries for a poison job')
      assert.match(failed.failedReason, /^invalid span-batch job: /)
    } finally {
      await writer.close()
    }
  })

  test('a completed job\'s request bodies are deleted from Redis; a copy of it completes, a job whose bodies were never there fails without retries', async () => {
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    const redis = new Redis(REDIS_URL)
    try {
      await enqueueSpans(producer, 'project-payload', makeSpans(5))
      const [waiting] = await inspect.queue.getJobs(['wait', 'active', 'completed'], 0, -1)
      const data = waiting?.data as KeyedSpanBatchJob
      assert.equal(data.version, 3)
      await waitFor('the spans', async () => (await countSpans(database.db, 'project-payload')) === 5)
      await waitFor('the payload to be deleted', async () => (await redis.exists(data.payloadKey)) === 0)

      // The same job added again after it completed and was removed (a resent add): nothing to do.
      const copy = await inspect.queue.add('span-batch', data, { attempts: 12 })
      await waitFor('the copy to complete', async () => (await inspect.queue.getJobState(copy.id as string)) === 'completed')
      assert.equal(await countSpans(database.db, 'project-payload'), 5)

      const orphan = await inspect.queue.add('span-batch', { ...data, payloadKey: `${data.payloadKey}-gone` }, { attempts: 12, backoff: { type: 'exponential', delay: 1_000 } })
      const failed = await waitFor('the job without bodies to fail', async () => {
        const state = await inspect.queue.getJobState(orphan.id as string)
        return state === 'failed' && (await inspect.queue.getJob(orphan.id as string))
      })
      assert.equal(failed.attemptsMade, 1, 'no retries for a job whose bodies are gone')
      assert.match(failed.failedReason, /^span-batch payload .*-gone is missing$/)
    } finally {
      redis.disconnect()
      await writer.close()
    }
  })

  test('an older ingest’s job that failed on a resent RPUSH is stored once by `queue:replay`', async () => {
    // A queue of its own: the stand-in for the old writer must not take the other tests' jobs.
    const ownPrefix = testPrefix()
    const own = openQueue(REDIS_URL, ownPrefix)
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null })
    const oldWriter = new Worker(QueueNames.spanBatches, async () => {
      throw new UnrecoverableError('span-batch payload holds 2 of 1 bodies')
    }, { connection: redis, prefix: ownPrefix })
    try {
      const { body } = acceptedTraces('project-resent', makeSpans(4))
      const payloadKey = `${ownPrefix}:span-batches:payload:resent`
      await redis.rpush(payloadKey, body, body)
      const job = await own.queue.add('span-batch', { version: 2, payloadKey, requests: [{ projectId: 'project-resent', encoding: 'json', spans: 4 }] } satisfies ReferencedSpanBatchJob)
      await waitFor('the old writer to fail it', async () => (await own.queue.getJobState(job.id as string)) === 'failed')
      await oldWriter.close()

      const replayed = await run(process.execPath, [replayPath], { env: { ...process.env, REDIS_URL, QUEUE_PREFIX: ownPrefix } })
      assert.match(replayed.stdout, /^Replayed 1 failed job\(s\) \(4 spans\)/)
      const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix: ownPrefix, concurrency: 1, logger: quiet })
      try {
        await waitFor('the replayed job to complete', async () => (await own.queue.getJobState(job.id as string)) === 'completed')
      } finally {
        await writer.close()
      }
      assert.equal(await countSpans(database.db, 'project-resent'), 4)
      assert.equal(await own.queue.getFailedCount(), 0)
    } finally {
      await oldWriter.close()
      redis.disconnect()
      await own.close()
    }
  })

  test('a job with a body that no longer decodes goes straight to the failed set and stores none of its spans', async () => {
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    const redis = new Redis(REDIS_URL)
    try {
      const { body } = acceptedTraces('project-undecodable', makeSpans(3))
      const payloadKey = `${prefix}:span-batches:payload:undecodable`
      await redis.rpush(payloadKey, Buffer.from(body), Buffer.from('{"resourceSpans":5}'))
      const data: ReferencedSpanBatchJob = {
        version: 2,
        payloadKey,
        requests: [
          { projectId: 'project-undecodable', encoding: 'json', spans: 3 },
          { projectId: 'project-undecodable', encoding: 'json', spans: 1 },
        ],
      }
      const job = await inspect.queue.add('span-batch', data, { attempts: 12, backoff: { type: 'exponential', delay: 1_000 } })
      const failed = await waitFor('the undecodable job to fail', async () => {
        const state = await inspect.queue.getJobState(job.id as string)
        return state === 'failed' && (await inspect.queue.getJob(job.id as string))
      })
      assert.equal(failed.attemptsMade, 1, 'no retries for a poison job')
      assert.match(failed.failedReason, /^span-batch body 1 no longer decodes: resourceSpans: /)
      assert.equal(await countSpans(database.db, 'project-undecodable'), 0, 'the decodable body of the job is not stored either')
      assert.equal(await redis.exists(payloadKey), 1, 'the bodies stay for a replay')
    } finally {
      redis.disconnect()
      await writer.close()
    }
  })

  test('close() while a job is active lets that job finish', async () => {
    const spans = makeSpans(6_000)
    await enqueueSpans(producer, 'project-close', spans)
    const [job] = await inspect.queue.getJobs(['wait', 'prioritized'], 0, 0)
    assert.ok(job)
    const writer = startSpanBatchWorker({ db: database.db, redis: REDIS_URL, prefix, concurrency: 1, logger: quiet })
    await once(writer.workers[0] as NonNullable<(typeof writer.workers)[0]>, 'active')
    await writer.close()
    assert.equal(await inspect.queue.getJobState(job.id as string), 'completed')
    assert.equal(await countSpans(database.db, 'project-close'), 6_000)
  })

  test('the writer app serves health, readiness and metrics on its own port and drains the queue', async () => {
    const config = loadConfig(WriterConfigSchema, { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: 'silent' })
    const app = await buildApp(config, { db: database.db, logger: false })
    try {
      assert.deepEqual((await app.inject('/healthz')).json(), { status: 'ok' })
      const ready = await app.inject('/readyz')
      assert.equal(ready.statusCode, 200)
      const readiness = ready.json<{ status: string; checks: object; details: { summaries: { deltas: number; traces: number; lagSeconds: number } } }>()
      assert.deepEqual({ ...readiness, details: undefined }, { status: 'ok', checks: { postgres: 'ok', queue: 'ok' }, details: undefined })
      assert.equal(typeof readiness.details.summaries.lagSeconds, 'number')
      await enqueueSpans(producer, 'project-app', makeSpans(10))
      await waitFor('the app to store the spans', async () => (await countSpans(database.db, 'project-app')) === 10)
      // Its summariser folds them (and what the tests before left) into the summaries.
      await waitFor('the summaries to include them', async () => (await summaryBacklog(database.db)).deltas === 0)
      const summarised = await sql<{ spans: number }>`select sum(span_count)::integer as spans from trace_summaries where project_id = 'project-app'`.execute(database.db)
      assert.equal(summarised.rows[0]?.spans, 10)
      assert.deepEqual((await app.inject('/readyz')).json().details, { summaries: { deltas: 0, traces: 0, lagSeconds: 0 }, unwritableShards: [] })
      const metrics = await app.inject('/metrics')
      assert.match(metrics.body, /tracewell_writer_spans_written_total 10\b/)
      assert.match(metrics.body, /tracewell_writer_aggregation_lag_seconds 0\b/)
    } finally {
      await app.close()
    }
    // The app did not own the database, so it is still usable.
    assert.equal(await countSpans(database.db, 'project-app'), 10)
  })
})
