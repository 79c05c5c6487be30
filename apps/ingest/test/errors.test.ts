import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { deflateRawSync, gzipSync } from 'node:zlib'
import { IngestConfigSchema, loadConfig } from '@tracewell/config'
import { createDb, revokeApiKey } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import type { SpanBatchProducer } from '@tracewell/queue'
import { startTcpProxy } from '@tracewell/test-support'
import type { Response as InjectResponse } from 'light-my-request'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildApp } from '../src/app.ts'
import { StatusMessage } from '../src/otlp/otlp-status.ts'
import { clientBodies, gzippedJsonBomb, gzippedZeros, langtraceSpans, seedBody } from './support/fixtures.ts'
import { createTenant, startIngest, testEnv, type IngestHarness } from './support/ingest-harness.ts'

// The failure answers of docs/api.md#send-traces, bodies asserted exactly, on both paths.

const MAX_BODY = 1 << 20
const MAX_INFLATED = 4 << 20
const MAX_SPANS = 5
const INVALID_KEY = '{"status":401,"message":"Invalid API key"}'
const protobufFixture = (clientBodies[0] as (typeof clientBodies)[number]).body

let ingest: IngestHarness
let bomb: Buffer
let jsonBomb: Buffer
before(async () => {
  ingest = await startIngest({ MAX_BODY_BYTES: String(MAX_BODY), MAX_INFLATED_BYTES: String(MAX_INFLATED), MAX_SPANS_PER_REQUEST: String(MAX_SPANS) })
  bomb = await gzippedZeros(200 * 1024 * 1024)
  jsonBomb = await gzippedJsonBomb(200 * 1024 * 1024)
})
after(async () => {
  await ingest.close()
})

interface Send {
  url?: string
  key?: string | null
  contentType?: string | null
  encoding?: string
  body: Buffer | string | Readable
}

function send(app: IngestHarness['app'], options: Send, projectKey: string): Promise<InjectResponse> {
  const headers: Record<string, string> = {}
  const key = options.key === undefined ? projectKey : options.key
  if (key !== null) headers['x-api-key'] = key
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType
  if (contentType !== null) headers['content-type'] = contentType
  if (options.encoding) headers['content-encoding'] = options.encoding
  return app.inject({ method: 'POST', url: options.url ?? '/api/trace', headers, payload: options.body })
}
const post = (options: Send) => send(ingest.app, options, ingest.tenant.projectKey)

function protobufStatus(response: InjectResponse): { code: number; message: string } {
  assert.equal(response.headers['content-type'], 'application/x-protobuf')
  return StatusMessage.toObject(StatusMessage.decode(response.rawPayload)) as { code: number; message: string }
}

describe('401 Invalid API key', () => {
  it('missing, empty, unknown and team keys', async () => {
    for (const key of [null, '', 'tw_proj_unknown', ingest.tenant.teamKey]) {
      const response = await post({ key, body: seedBody })
      assert.equal(response.statusCode, 401, String(key))
      assert.equal(response.body, INVALID_KEY)
    }
  })

  it('takes the key from Authorization: Bearer as well, and x-api-key wins when both are sent', async () => {
    const bearer = (authorization: string, key: string | null = null) =>
      ingest.app.inject({
        method: 'POST',
        url: '/api/trace',
        headers: { 'content-type': 'application/json', authorization, ...(key === null ? {} : { 'x-api-key': key }) },
        payload: seedBody,
      })
    assert.equal((await bearer(`Bearer ${ingest.tenant.projectKey}`)).statusCode, 200)
    assert.equal((await bearer(`bearer ${ingest.tenant.projectKey}`)).statusCode, 200)
    const refused = await bearer(`Bearer ${ingest.tenant.projectKey}`, 'tw_proj_unknown')
    assert.equal(refused.statusCode, 401)
    assert.equal(refused.body, INVALID_KEY)
    assert.equal((await bearer(`Basic ${ingest.tenant.projectKey}`)).statusCode, 401)
  })

  it('comes before any look at the body: malformed, oversized, unsupported, bombs', async () => {
    const cases: Send[] = [
      { key: null, body: '{"resourceSpans": [' },
      { key: 'wrong', body: Buffer.alloc(MAX_BODY + 10, 0x41) },
      { key: 'wrong', contentType: 'text/plain', body: 'hello' },
      { key: null, contentType: null, body: 'hello' },
      { key: 'wrong', encoding: 'br', body: 'x' },
      { key: null, encoding: 'gzip', body: bomb },
    ]
    for (const [index, request] of cases.entries()) {
      const response = await post(request)
      assert.equal(response.statusCode, 401, `case ${index}`)
      assert.equal(response.body, INVALID_KEY)
    }
    // A protobuf request is answered in protobuf, on /api/trace too.
    const proto = await post({ key: null, contentType: 'application/x-protobuf', body: Buffer.from([0xff, 0xff, 0xff]) })
    assert.equal(proto.statusCode, 401)
    assert.deepEqual(protobufStatus(proto), { code: 16, message: 'Invalid API key' })
  })

  it('a revoked key stops working within the cache TTL (≤ 5 s)', async () => {
    const accepted = await post({ body: seedBody })
    assert.equal(accepted.statusCode, 200)
    assert.ok(await revokeApiKey(ingest.database.db, ingest.tenant.teamId, ingest.tenant.projectKeyId))
    const revokedAt = Date.now()
    let response = await post({ body: seedBody })
    while (response.statusCode === 200 && Date.now() - revokedAt < 5_000) {
      await sleep(50)
      response = await post({ body: seedBody })
    }
    assert.equal(response.statusCode, 401)
    assert.equal(response.body, INVALID_KEY)
    assert.ok(Date.now() - revokedAt < 5_000)
    // Later tests need a working key again.
    const { createTenant } = await import('./support/ingest-harness.ts')
    ingest.tenant = await createTenant(ingest.database.db, 'ingest-test-2')
  })

  it('on /v1/traces is a google.rpc.Status in the encoding of the request', async () => {
    const json = await post({ url: '/v1/traces', key: null, body: seedBody })
    assert.equal(json.statusCode, 401)
    assert.match(String(json.headers['content-type']), /^application\/json/)
    assert.equal(json.body, '{"code":16,"message":"Invalid API key"}')
    const proto = await post({ url: '/v1/traces', key: 'wrong', contentType: 'application/x-protobuf', body: protobufFixture })
    assert.equal(proto.statusCode, 401)
    assert.deepEqual(protobufStatus(proto), { code: 16, message: 'Invalid API key' })
  })
})

describe('400 malformed bodies', () => {
  const cases: Array<{ name: string; request: Send; message: string | RegExp }> = [
    { name: 'truncated JSON', request: { body: '{"resourceSpans": [' }, message: 'body: malformed JSON (Unexpected end of JSON input at position 19)' },
    { name: 'bad token', request: { body: '{"resourceSpans": [}' }, message: /^body: malformed JSON \(.*position 19/ },
    { name: 'bad token far in', request: { body: `[${'1,'.repeat(40)},2${'3'.repeat(40)}]` }, message: /^body: malformed JSON \(Unexpected token ',', .* at position 81\)$/ },
    { name: 'invalid UTF-8', request: { body: Buffer.from([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d]) }, message: 'body: malformed JSON (not valid UTF-8)' },
    { name: 'a number', request: { body: '42' }, message: /^body: / },
    { name: 'wrong id', request: { body: '[{"traceId":"xyz","spanId":"00f067aa0ba902b7","name":"a","startTime":[1,0],"endTime":[1,0]}]' }, message: /^\[0\]\.traceId: / },
    {
      name: 'wrong type deep in OTLP JSON',
      request: { body: '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":7,"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}' },
      message: /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.name: /,
    },
    { name: 'random protobuf', request: { contentType: 'application/x-protobuf', body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]) }, message: /^body: malformed protobuf/ },
    { name: 'corrupt gzip', request: { encoding: 'gzip', body: Buffer.from('this is not gzip at all') }, message: /^body: invalid gzip data \(/ },
    { name: 'truncated gzip', request: { encoding: 'gzip', body: gzipSync(seedBody).subarray(0, 40) }, message: 'body: invalid gzip data (unexpected end of file)' },
    { name: 'corrupt deflate', request: { encoding: 'deflate', body: Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff]) }, message: /^body: invalid deflate data \(/ },
  ]
  for (const { name, request, message } of cases) {
    it(name, async () => {
      const response = await post(request)
      assert.equal(response.statusCode, 400)
      if (request.contentType === 'application/x-protobuf') {
        const status = protobufStatus(response)
        assert.equal(status.code, 3)
        if (typeof message === 'string') assert.equal(status.message, message)
        else assert.match(status.message, message)
        return
      }
      const body = response.json<{ status: number; message: string }>()
      assert.deepEqual(Object.keys(body), ['status', 'message'])
      assert.equal(body.status, 400)
      if (typeof message === 'string') assert.equal(body.message, message)
      else assert.match(body.message, message)
    })
  }

  it('on /v1/traces: JSON and protobuf Status with INVALID_ARGUMENT', async () => {
    const json = await post({ url: '/v1/traces', body: '{"resourceSpans": [' })
    assert.equal(json.statusCode, 400)
    assert.equal(json.body, '{"code":3,"message":"body: malformed JSON (Unexpected end of JSON input at position 19)"}')
    const proto = await post({ url: '/v1/traces', contentType: 'application/x-protobuf', body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]) })
    assert.equal(proto.statusCode, 400)
    const status = protobufStatus(proto)
    assert.equal(status.code, 3)
    assert.match(status.message, /^body: malformed protobuf/)
  })

  it('accepts raw DEFLATE sent as "deflate" (some clients skip the zlib wrapper)', async () => {
    const response = await post({ encoding: 'deflate', body: deflateRawSync(seedBody) })
    assert.equal(response.statusCode, 200)
  })
})

describe('413 payload too large', () => {
  const rawTooLarge = `{"status":413,"message":"body: larger than ${MAX_BODY} bytes (MAX_BODY_BYTES)"}`

  it('a body over MAX_BODY_BYTES, declared or streamed', async () => {
    const declared = await post({ body: Buffer.alloc(MAX_BODY + 1, 0x20) })
    assert.equal(declared.statusCode, 413)
    assert.equal(declared.body, rawTooLarge)
    // Without a Content-Length the running count stops it.
    const streamed = await post({ body: Readable.from([Buffer.alloc(MAX_BODY / 2, 0x20), Buffer.alloc(MAX_BODY / 2, 0x20), Buffer.from('  ')]) })
    assert.equal(streamed.statusCode, 413)
    assert.equal(streamed.body, rawTooLarge)
  })

  it('a gzip bomb is stopped while inflating, and the process stays healthy', async () => {
    // JSON as far as it goes, so only the size stops it.
    assert.ok(jsonBomb.length < MAX_BODY, `the bomb is ${jsonBomb.length} bytes compressed`)
    const started = Date.now()
    const response = await post({ encoding: 'gzip', body: jsonBomb })
    const elapsed = Date.now() - started
    assert.equal(response.statusCode, 413)
    assert.equal(response.body, `{"status":413,"message":"body: larger than ${MAX_INFLATED} bytes once decompressed (MAX_INFLATED_BYTES)"}`)
    // Inflating all 200 MB would take seconds; stopping at the limit takes milliseconds.
    assert.ok(elapsed < 2_000, `answered after ${elapsed} ms`)
    const health = await ingest.app.inject('/healthz')
    assert.equal(health.statusCode, 200)
    assert.equal((await post({ body: seedBody })).statusCode, 200)
  })

  it('a gzip bomb that is not JSON is refused as malformed at its first large chunk', async () => {
    const response = await post({ encoding: 'gzip', body: bomb })
    assert.equal(response.statusCode, 400)
    assert.equal(response.body, '{"status":400,"message":"body: malformed JSON (Unexpected token \'\\u0000\' at position 0)"}')
  })

  it('more spans than MAX_SPANS_PER_REQUEST', async () => {
    assert.equal((await post({ body: langtraceSpans(MAX_SPANS) })).statusCode, 200)
    const response = await post({ body: langtraceSpans(MAX_SPANS + 1) })
    assert.equal(response.statusCode, 413)
    assert.equal(response.body, `{"status":413,"message":"body: ${MAX_SPANS + 1} spans, more than the ${MAX_SPANS} accepted in one request (MAX_SPANS_PER_REQUEST)"}`)
  })

  it('on /v1/traces with protobuf is a RESOURCE_EXHAUSTED Status', async () => {
    const response = await post({ url: '/v1/traces', contentType: 'application/x-protobuf', encoding: 'gzip', body: bomb })
    assert.equal(response.statusCode, 413)
    assert.deepEqual(protobufStatus(response), { code: 8, message: `body: larger than ${MAX_INFLATED} bytes once decompressed (MAX_INFLATED_BYTES)` })
  })
})

describe('415 unsupported media', () => {
  const accepted = 'accepted: application/json, application/x-protobuf, application/protobuf'
  it('content types', async () => {
    const text = await post({ contentType: 'text/plain', body: 'hello' })
    assert.equal(text.statusCode, 415)
    assert.equal(text.body, `{"status":415,"message":"Unsupported Content-Type 'text/plain'; ${accepted}"}`)
    const none = await post({ contentType: null, body: seedBody })
    assert.equal(none.statusCode, 415)
    assert.equal(none.body, `{"status":415,"message":"Unsupported Content-Type (none); ${accepted}"}`)
    const form = await post({ contentType: 'application/x-www-form-urlencoded', body: 'a=b' })
    assert.equal(form.statusCode, 415)
  })

  it('JSON in a charset other than UTF-8, which would be read as UTF-8', async () => {
    const utf16 = await post({ contentType: 'application/json; charset=utf-16', body: Buffer.from(seedBody.toString('utf8'), 'utf16le') })
    assert.equal(utf16.statusCode, 415)
    assert.equal(utf16.body, `{"status":415,"message":"Unsupported charset 'utf-16' in Content-Type; JSON bodies must be UTF-8 (charset=utf-8 or none)"}`)
    const latin1 = await post({ url: '/v1/traces', contentType: 'application/json;charset=ISO-8859-1', body: seedBody })
    assert.equal(latin1.statusCode, 415)
    assert.equal(latin1.body, `{"code":3,"message":"Unsupported charset 'iso-8859-1' in Content-Type; JSON bodies must be UTF-8 (charset=utf-8 or none)"}`)
    assert.equal((await post({ contentType: 'application/json; charset="UTF-8"', body: seedBody })).statusCode, 200)
    assert.equal((await post({ contentType: 'application/x-protobuf; charset=utf-16', body: protobufFixture })).statusCode, 200, 'a charset means nothing to protobuf')
  })

  it('content encodings', async () => {
    const response = await post({ encoding: 'br', body: seedBody })
    assert.equal(response.statusCode, 415)
    assert.equal(response.body, `{"status":415,"message":"Unsupported Content-Encoding 'br'; accepted: gzip, deflate, identity"}`)
  })

  it('on /v1/traces is a JSON Status when the type is neither', async () => {
    const response = await post({ url: '/v1/traces', contentType: 'text/plain', body: 'x' })
    assert.equal(response.statusCode, 415)
    assert.equal(response.body, `{"code":3,"message":"Unsupported Content-Type 'text/plain'; ${accepted}"}`)
  })
})

describe('metrics', () => {
  it('count requests, accepted spans and rejections by reason', async () => {
    const text = (await ingest.app.inject('/metrics')).body
    assert.match(text, /tracewell_ingest_rejections_total\{reason="unauthorized"\} \d+/)
    assert.match(text, /tracewell_ingest_rejections_total\{reason="invalid"\} \d+/)
    assert.match(text, /tracewell_ingest_rejections_total\{reason="payload_too_large"\} \d+/)
    assert.match(text, /tracewell_ingest_rejections_total\{reason="unsupported_media_type"\} \d+/)
    assert.match(text, /tracewell_ingest_requests_total\{route="\/api\/trace",format="json",outcome="accepted"\} \d+/)
    assert.match(text, /tracewell_ingest_spans_accepted_total [1-9]\d*/)
    assert.match(text, /tracewell_ingest_queue_backlog_spans \d+/)
  })

  it('count each request once, by route, format and outcome, and each accepted span', async () => {
    const scrape = async () => {
      const text = (await ingest.app.inject('/metrics')).body
      const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
      return {
        accepted: value('tracewell_ingest_requests_total{route="/v1/traces",format="json",outcome="accepted"}'),
        unauthorized: value('tracewell_ingest_requests_total{route="/v1/traces",format="json",outcome="unauthorized"}'),
        invalid: value('tracewell_ingest_requests_total{route="/v1/traces",format="protobuf",outcome="invalid"}'),
        rejectedUnauthorized: value('tracewell_ingest_rejections_total{reason="unauthorized"}'),
        rejectedInvalid: value('tracewell_ingest_rejections_total{reason="invalid"}'),
        spans: value('tracewell_ingest_spans_accepted_total'),
      }
    }
    const before = await scrape()
    const seedSpans = (JSON.parse(seedBody.toString()) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> }).resourceSpans
      .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)).length
    for (let i = 0; i < 2; i++) assert.equal((await post({ url: '/v1/traces', body: seedBody })).statusCode, 200)
    assert.equal((await post({ url: '/v1/traces', key: 'tw_proj_unknown', body: seedBody })).statusCode, 401)
    assert.equal((await post({ url: '/v1/traces', contentType: 'application/x-protobuf', body: 'not protobuf' })).statusCode, 400)
    const after = await scrape()
    assert.deepEqual(
      Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - before[name as keyof typeof before]])),
      { accepted: 2, unauthorized: 1, invalid: 1, rejectedUnauthorized: 1, rejectedInvalid: 1, spans: 2 * seedSpans },
    )
  })
})

describe('429 when the queue backlog is over its bound', () => {
  let small: IngestHarness
  before(async () => {
    small = await startIngest({ QUEUE_MAX_BACKLOG: '1' })
  })
  after(async () => {
    await small.close()
  })

  it('answers 429 with Retry-After once the backlog is full, on both paths', async () => {
    const first = await send(small.app, { body: seedBody }, small.tenant.projectKey)
    assert.equal(first.statusCode, 200)
    // The producer measures the backlog a few times a second; nothing drains this queue.
    let response = first
    const deadline = Date.now() + 5_000
    while (response.statusCode === 200 && Date.now() < deadline) {
      await sleep(50)
      response = await send(small.app, { body: seedBody }, small.tenant.projectKey)
    }
    assert.equal(response.statusCode, 429)
    assert.equal(response.headers['retry-after'], '1')
    assert.equal(response.body, '{"status":429,"message":"Too many spans are waiting to be stored; retry after 1 s"}')
    const otlp = await send(small.app, { url: '/v1/traces', contentType: 'application/x-protobuf', body: protobufFixture }, small.tenant.projectKey)
    assert.equal(otlp.statusCode, 429)
    assert.equal(otlp.headers['retry-after'], '1')
    assert.deepEqual(protobufStatus(otlp), { code: 8, message: 'Too many spans are waiting to be stored; retry after 1 s' })
    const metrics = (await small.app.inject('/metrics')).body
    assert.match(metrics, /tracewell_ingest_rejections_total\{reason="backlog_full"\} [1-9]/)
  })
})

describe('503 when API keys cannot be looked up', () => {
  it('answers with Retry-After, not 401: the key may well be valid', async () => {
    const unreachable = 'postgres://postgres@127.0.0.1:1/none'
    const config = loadConfig(IngestConfigSchema, { DATABASE_URL: unreachable, REDIS_URL: testEnv.REDIS_URL, QUEUE_PREFIX: testQueuePrefix('ingest'), LOG_LEVEL: 'silent' })
    const db = createDb({ databaseUrl: unreachable, poolSize: 1 })
    const app = await buildApp(config, { db })
    try {
      for (const url of ['/api/trace', '/v1/traces']) {
        const response = await send(app, { url, body: seedBody }, ingest.tenant.projectKey)
        assert.equal(response.statusCode, 503, url)
        assert.equal(response.headers['retry-after'], '5')
        const message = 'API keys cannot be checked right now; retry after 5 s'
        assert.equal(response.body, url === '/api/trace' ? `{"status":503,"message":"${message}"}` : `{"code":14,"message":"${message}"}`)
      }
    } finally {
      await app.close()
      await db.destroy()
    }
  })
})

describe('a Postgres outage with Redis up (a proxy in front of Postgres, closed)', () => {
  it('keeps accepting spans for keys verified before it, and answers 503 for keys it must look up', async () => {
    const database = await createTestDatabase()
    const url = new URL(database.url)
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    url.port = String(proxy.port)
    const db = createDb({ databaseUrl: url.toString(), poolSize: 2 })
    const config = loadConfig(IngestConfigSchema, {
      DATABASE_URL: url.toString(),
      REDIS_URL: testEnv.REDIS_URL,
      QUEUE_PREFIX: testQueuePrefix('ingest'),
      LOG_LEVEL: 'silent',
      KEY_CACHE_TTL_MS: '100',
    })
    const app = await buildApp(config, { db })
    try {
      const tenant = await createTenant(database.db)
      assert.equal((await send(app, { body: seedBody }, tenant.projectKey)).statusCode, 200)

      proxy.setDown(true)
      await sleep(150) // past the key cache TTL: the key must be looked up, and cannot be
      for (let i = 0; i < 3; i++) {
        const response = await send(app, { body: seedBody }, tenant.projectKey)
        assert.equal(response.statusCode, 200, 'a key verified before the outage keeps working')
      }
      const unknown = await send(app, { body: seedBody }, tenant.teamKey)
      assert.equal(unknown.statusCode, 503, 'a key never verified here cannot be checked')
      assert.equal(unknown.headers['retry-after'], '5')
    } finally {
      proxy.setDown(false)
      await app.close()
      await db.destroy()
      await proxy.close()
      await database.drop()
    }
  })
})

describe('503 when Redis is unreachable', () => {
  let down: IngestHarness
  before(async () => {
    down = await startIngest({ REDIS_URL: 'redis://127.0.0.1:6399' })
  })
  after(async () => {
    await down.close()
  })

  it('answers fast with Retry-After, and /readyz says so', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const started = Date.now()
      const response = await send(down.app, { body: seedBody }, down.tenant.projectKey)
      assert.ok(Date.now() - started < 2_000, `answered after ${Date.now() - started} ms`)
      assert.equal(response.statusCode, 503)
      assert.equal(response.headers['retry-after'], '5')
      assert.equal(response.body, '{"status":503,"message":"The trace queue is unavailable; retry after 5 s"}')
    }
    const otlp = await send(down.app, { url: '/v1/traces', body: seedBody }, down.tenant.projectKey)
    assert.equal(otlp.statusCode, 503)
    assert.equal(otlp.body, '{"code":14,"message":"The trace queue is unavailable; retry after 5 s"}')
    const ready = await down.app.inject('/readyz')
    assert.equal(ready.statusCode, 503)
    assert.equal(ready.json<{ checks: Record<string, string> }>().checks.postgres, 'ok')
  })
})

describe('500 for anything else', () => {
  it('hides the cause and names the request id', async () => {
    const broken: SpanBatchProducer = {
      needsSpanRecords: false,
      enqueue: () => Promise.reject(new TypeError('a bug in the producer')),
      backlog: () => 0,
      backlogBytes: () => 0,
      ping: async () => {},
      close: async () => {},
    }
    const app = await startIngest({}, { producer: broken })
    try {
      const response = await app.app.inject({
        method: 'POST',
        url: '/api/trace',
        headers: { 'x-api-key': app.tenant.projectKey, 'content-type': 'application/json', 'x-request-id': 'req-42' },
        payload: seedBody,
      })
      assert.equal(response.statusCode, 500)
      assert.equal(response.body, '{"status":500,"message":"Internal server error (request req-42)"}')
      const otlp = await app.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { 'x-api-key': app.tenant.projectKey, 'content-type': 'application/x-protobuf', 'x-request-id': 'req-43' },
        payload: protobufFixture,
      })
      assert.equal(otlp.statusCode, 500)
      assert.deepEqual(protobufStatus(otlp), { code: 13, message: 'Internal server error (request req-43)' })
    } finally {
      await app.close()
    }
  })
})
