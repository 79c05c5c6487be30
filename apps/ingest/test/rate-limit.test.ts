import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { Client, credentials, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js'
import { deleteProjectIngestLimit, upsertProjectIngestLimit } from '@tracewell/db'
import { spanRateLimitKeyOf, spanBatchShards } from '@tracewell/queue'
import { Redis } from 'ioredis'
import protobuf from 'protobufjs'
import { buildApp } from '../src/app.ts'
import { StatusMessage } from '../src/otlp/otlp-status.ts'
import { createTenant, startIngest, testEnv, type IngestHarness } from './support/ingest-harness.ts'
import { nextTraceId, otlpJson, otlpProtobuf, traceSpans } from './support/otlp-bodies.ts'

// Per-project ingest rate limits against the real Redis (the buckets) and Postgres (the limits).
// Buckets refill at 1 span per second, so what a test drains stays drained for its few requests.

const langtraceBody = readFileSync(new URL('../../../test-fixtures/langtrace-ts-sdk-1.json', import.meta.url))
const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export'

let ingest: IngestHarness
const redis = new Redis(testEnv.REDIS_URL)

before(async () => {
  ingest = await startIngest({ INGEST_RATE_LIMIT_REFRESH_MS: '200' })
})
after(async () => {
  await ingest.close()
  redis.disconnect()
})

const sendJson = (key: string, spans: number, url = '/v1/traces') =>
  ingest.app.inject({ method: 'POST', url, headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: otlpJson(traceSpans(nextTraceId(), spans)) })

/** Waits for ingest's next reload of the limits (every 200 ms here). */
const reloaded = () => new Promise((resolve) => setTimeout(resolve, 600))

/** A project of its own with a limit of 1 span/s and a bucket of `burst`. */
async function limitedProject(burst: number) {
  const tenant = await createTenant(ingest.database.db, `limited-${burst}`)
  await upsertProjectIngestLimit(ingest.database.db, { projectId: tenant.projectId, spansPerSecond: 1, burst })
  await reloaded()
  return tenant
}

function assertRateLimited(response: { statusCode: number; headers: Record<string, unknown> }, burst: number) {
  assert.equal(response.statusCode, 429)
  const retryAfter = Number(response.headers['retry-after'])
  assert.ok(retryAfter >= 1 && retryAfter <= burst, `Retry-After ${retryAfter}`)
  assert.equal(response.headers['ratelimit-limit'], String(burst))
  assert.ok(Number(response.headers['ratelimit-remaining']) < burst)
  assert.ok(Number(response.headers['ratelimit-reset']) >= 1)
}

describe('per-project ingest rate limits', { timeout: 60_000 }, () => {
  it('a project without a limit gets no rate-limit fields and is never refused', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await sendJson(ingest.tenant.projectKey, 50)
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.headers['ratelimit-limit'], undefined)
    }
  })

  it('takes spans from the bucket, then answers 429 with Retry-After and the RateLimit fields, queueing nothing of the refused request', async () => {
    const tenant = await limitedProject(10)
    const first = await sendJson(tenant.projectKey, 4)
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.headers['ratelimit-limit'], '10')
    assert.ok(['6', '7'].includes(String(first.headers['ratelimit-remaining'])), `remaining ${first.headers['ratelimit-remaining']}`)
    assert.equal((await sendJson(tenant.projectKey, 4)).statusCode, 200)
    const refused = await sendJson(tenant.projectKey, 4)
    assertRateLimited(refused, 10)
    assert.match(JSON.parse(refused.body).message, /over its ingest rate limit of 1 spans per second \(burst 10\): 4 spans sent/)
    const queued = (await ingest.queuedSpans()).filter((entry) => entry.projectId === tenant.projectId)
    assert.equal(queued.length, 8, 'the refused spans were not queued')
    // Another project is not slowed by this one's limit.
    assert.equal((await sendJson(ingest.tenant.projectKey, 20)).statusCode, 200)
    // Counted apart from a full backlog's 429s.
    const metrics = (await ingest.app.inject({ url: '/metrics' })).body
    assert.match(metrics, /tracewell_ingest_rejections_total\{reason="rate_limited"\} [1-9]/)
    assert.doesNotMatch(metrics, /tracewell_ingest_rejections_total\{reason="backlog_full"\}/)
  })

  it('answers 429 the same on every HTTP route and encoding: Langtrace, OTLP JSON and protobuf, Langfuse’s path', async () => {
    const tenant = await limitedProject(1)
    assert.equal((await sendJson(tenant.projectKey, 1)).statusCode, 200)
    const langtrace = await ingest.app.inject({ method: 'POST', url: '/api/trace', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: langtraceBody })
    assertRateLimited(langtrace, 1)
    assert.equal(JSON.parse(langtrace.body).status, 429)
    assertRateLimited(await sendJson(tenant.projectKey, 1, '/v1/traces'), 1)
    assertRateLimited(await sendJson(tenant.projectKey, 1, '/api/public/otel/v1/traces'), 1)
    const protobufAnswer = await ingest.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/x-protobuf' },
      payload: otlpProtobuf(traceSpans(nextTraceId(), 1)),
    })
    assertRateLimited(protobufAnswer, 1)
    assert.equal(protobufAnswer.headers['content-type'], 'application/x-protobuf')
    const status = StatusMessage.toObject(StatusMessage.decode(protobufAnswer.rawPayload)) as { code: number; message: string }
    assert.equal(status.code, 8, 'RESOURCE_EXHAUSTED')
  })

  it('refuses a project whose bucket is empty before reading its body', async () => {
    const tenant = await limitedProject(2)
    const emptied = await sendJson(tenant.projectKey, 2)
    assert.equal(emptied.headers['ratelimit-remaining'], '0')
    // Not even JSON: had it been read, the answer would be a 400.
    const refused = await ingest.app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: '{"resourceSpans": [' })
    assertRateLimited(refused, 2)
    assert.equal(refused.headers['retry-after'], '1')
    assert.match(JSON.parse(refused.body).message, /over its ingest rate limit of 1 spans per second \(burst 2\): no span left now; retry after 1 s/)
    // Once the bucket holds a span again, the body is read and judged as usual.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const read = await ingest.app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: '{"resourceSpans": [' })
    assert.equal(read.statusCode, 400, read.body)
  })

  it('answers OTLP/gRPC RESOURCE_EXHAUSTED with a RetryInfo', async () => {
    const tenant = await limitedProject(2)
    const port = await ingest.app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure())
    try {
      assert.equal((await callExport(client, otlpProtobuf(traceSpans(nextTraceId(), 2)), tenant.projectKey)).error, undefined)
      const { error } = await callExport(client, otlpProtobuf(traceSpans(nextTraceId(), 2)), tenant.projectKey)
      assert.equal(error?.code, GrpcStatus.RESOURCE_EXHAUSTED)
      assert.match(error?.details ?? '', /over its ingest rate limit/)
      const delay = retryDelaySeconds(error as ServiceError)
      assert.ok(delay !== undefined && delay >= 1 && delay <= 2, `RetryInfo ${delay}`)
    } finally {
      client.close()
    }
  })

  it('a project’s new limit, and its removal, apply within the refresh interval', async () => {
    const tenant = await createTenant(ingest.database.db, 'changing')
    assert.equal((await sendJson(tenant.projectKey, 5)).statusCode, 200)
    await upsertProjectIngestLimit(ingest.database.db, { projectId: tenant.projectId, spansPerSecond: 1, burst: 5 })
    await reloaded()
    assert.equal((await sendJson(tenant.projectKey, 5)).statusCode, 200)
    assert.equal((await sendJson(tenant.projectKey, 5)).statusCode, 429)
    await deleteProjectIngestLimit(ingest.database.db, tenant.projectId)
    await reloaded()
    assert.equal((await sendJson(tenant.projectKey, 5)).statusCode, 200)
  })

  it('shares one bucket per project between ingest replicas, in Redis, in the project’s shard', async () => {
    const tenant = await limitedProject(6)
    const second = await buildApp(ingest.config, { db: ingest.database.db })
    try {
      await second.ready()
      assert.equal((await sendJson(tenant.projectKey, 6)).statusCode, 200)
      const other = await second.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: otlpJson(traceSpans(nextTraceId(), 3)) })
      assertRateLimited(other, 6)
      const [shard] = spanBatchShards({ prefix: ingest.prefix, count: 1, cluster: false })
      const bucket = await redis.hgetall(spanRateLimitKeyOf(shard?.prefix ?? '', tenant.projectId))
      assert.ok(Number(bucket.tokens) < 1, `the bucket in Redis holds ${bucket.tokens} spans`)
      assert.ok((await redis.pttl(spanRateLimitKeyOf(shard?.prefix ?? '', tenant.projectId))) > 0, 'it expires once it would be full again')
    } finally {
      await second.close()
    }
  })

  it('the default of the settings limits every project, and null exempts one', async () => {
    const limited = await startIngest({ INGEST_RATE_LIMIT_SPANS_PER_SECOND: '1', INGEST_RATE_LIMIT_BURST: '3', INGEST_RATE_LIMIT_REFRESH_MS: '200' })
    try {
      const send = (key: string) => limited.app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: otlpJson(traceSpans(nextTraceId(), 3)) })
      assert.equal((await send(limited.tenant.projectKey)).statusCode, 200)
      assertRateLimited(await send(limited.tenant.projectKey), 3)
      await upsertProjectIngestLimit(limited.database.db, { projectId: limited.tenant.projectId, spansPerSecond: null, burst: null })
      await reloaded()
      for (let i = 0; i < 3; i++) assert.equal((await send(limited.tenant.projectKey)).statusCode, 200)
    } finally {
      await limited.close()
    }
  })

  it('gives a request’s spans back to the bucket when the queue refuses it, so its retry is not counted twice', async () => {
    const full = await startIngest({ QUEUE_MAX_BACKLOG: '1', INGEST_RATE_LIMIT_REFRESH_MS: '200' })
    try {
      await upsertProjectIngestLimit(full.database.db, { projectId: full.tenant.projectId, spansPerSecond: 1, burst: 10 })
      await reloaded()
      const send = () => full.app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': full.tenant.projectKey, 'content-type': 'application/json' }, payload: otlpJson(traceSpans(nextTraceId(), 4)) })
      assert.equal((await send()).statusCode, 200)
      // Nothing drains this queue: once the producer has measured its backlog (every 250 ms), it is full.
      await new Promise((resolve) => setTimeout(resolve, 700))
      const refused = await send()
      assert.equal(refused.statusCode, 429, refused.body)
      assert.equal(refused.headers['ratelimit-limit'], undefined, 'a full backlog, not the rate limit')
      const [shard] = spanBatchShards({ prefix: full.prefix, count: 1, cluster: false })
      const key = spanRateLimitKeyOf(shard?.prefix ?? '', full.tenant.projectId)
      // The refused request's 4 spans are back: the bucket holds what the accepted requests left.
      const accepted = (await full.queuedSpans()).length
      await new Promise((resolve) => setTimeout(resolve, 100))
      const tokens = Number((await redis.hgetall(key)).tokens)
      assert.ok(tokens >= 10 - accepted - 0.5 && tokens <= 10, `${tokens} spans in the bucket after ${accepted} accepted`)
    } finally {
      await full.close()
    }
  })

  it('a request larger than the whole bucket is taken when the bucket is full, then the project waits', async () => {
    const tenant = await limitedProject(5)
    const large = await sendJson(tenant.projectKey, 8)
    assert.equal(large.statusCode, 200, large.body)
    assert.equal(large.headers['ratelimit-remaining'], '0')
    const next = await sendJson(tenant.projectKey, 1)
    assertRateLimited(next, 5)
    assert.ok(Number(next.headers['retry-after']) >= 3, 'the debt of 3 spans is paid back first')
  })
})

function callExport(client: Client, body: Buffer, key: string): Promise<{ response?: Buffer; error?: ServiceError }> {
  const metadata = new Metadata()
  metadata.set('x-api-key', key)
  return new Promise((resolve) => {
    client.makeUnaryRequest(EXPORT_PATH, (bytes: Buffer) => bytes, (bytes: Buffer) => bytes, body, metadata, (error, response) =>
      resolve(error ? { error } : { response: response as Buffer }),
    )
  })
}

const RetryInfo = protobuf.parse(`
  syntax = "proto3";
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }
`).root.lookupType('RetryInfo')

function retryDelaySeconds(error: ServiceError): number | undefined {
  const bytes = error.metadata.get('grpc-status-details-bin')[0]
  if (!(bytes instanceof Buffer)) return undefined
  const status = StatusMessage.decode(bytes) as unknown as { details: Array<{ type_url: string; value: Uint8Array }> }
  const retry = status.details.find((detail) => detail.type_url === 'type.googleapis.com/google.rpc.RetryInfo')
  if (retry === undefined) return undefined
  return Number((RetryInfo.toObject(RetryInfo.decode(retry.value), { longs: Number }) as { retryDelay: { seconds: number } }).retryDelay.seconds)
}
