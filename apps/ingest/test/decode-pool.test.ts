import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { configureSpanLimits, DEFAULT_SPAN_LIMITS } from '@tracewell/otlp'
import { langtraceSpans } from './support/fixtures.ts'
import { startIngest, type IngestHarness } from './support/ingest-harness.ts'
import { nextTraceId, otlpJson, otlpProtobuf, otlpProtobufWithAttributes, traceSpans } from './support/otlp-bodies.ts'

// Bodies over 256 KiB are decoded in worker threads (DECODE_THREADS), so that one large body
// never holds the event loop every other request needs. Off the thread or on it, a client must
// get exactly the same answer: each case is sent to an ingest with workers and to one without,
// and the two answers compared. How much that helps other clients' latency is bench:hostile's.

let database: TestDatabase
let pooled: IngestHarness
let inline: IngestHarness
before(async () => {
  database = await createTestDatabase()
  pooled = await startIngest({ DECODE_THREADS: '2', MAX_PROTOBUF_FIELDS: '150000' }, { database })
  inline = await startIngest({ DECODE_THREADS: '0', MAX_PROTOBUF_FIELDS: '150000' }, { database })
})
after(async () => {
  await pooled?.close()
  await inline?.close()
  await database?.drop()
})

function post(ingest: IngestHarness, url: string, contentType: string, payload: string | Buffer) {
  return ingest.app.inject({ method: 'POST', url, headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': contentType }, payload })
}

async function workerDecodes(ingest: IngestHarness): Promise<number> {
  const metrics = (await ingest.app.inject('/metrics')).body
  return Number(/^tracewell_ingest_worker_decodes_total (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN)
}

const large = (text: string | Buffer) => {
  assert.ok(text.length > 256 * 1024, `${text.length} bytes is not over the 256 KiB threshold`)
  return text
}

const cases: Array<{ name: string; url: string; contentType: string; body: () => string | Buffer; status: number }> = [
  { name: '5,000 valid OTLP JSON spans', url: '/v1/traces', contentType: 'application/json', body: () => otlpJson(traceSpans(nextTraceId(), 5_000)), status: 200 },
  { name: 'OTLP JSON with two invalid spans among 5,000 (partial success)', url: '/v1/traces', contentType: 'application/json', body: () => otlpJson(traceSpans(nextTraceId(), 5_000, [3, 4_000])), status: 200 },
  { name: '5,000 valid OTLP protobuf spans', url: '/v1/traces', contentType: 'application/x-protobuf', body: () => otlpProtobuf(traceSpans(nextTraceId(), 5_000)), status: 200 },
  { name: '3,000 Langtrace spans on /api/trace', url: '/api/trace', contentType: 'application/json', body: () => langtraceSpans(3_000), status: 200 },
  { name: 'JSON of the wrong shape', url: '/v1/traces', contentType: 'application/json', body: () => JSON.stringify({ resourceSpans: 'x'.repeat(300_000) }), status: 400 },
  { name: 'every span invalid', url: '/api/trace', contentType: 'application/json', body: () => otlpJson(traceSpans(nextTraceId(), 2_000, Array.from({ length: 2_000 }, (_, i) => i))), status: 400 },
  {
    name: 'JSON that is not UTF-8',
    url: '/v1/traces',
    contentType: 'application/json',
    body: () => Buffer.concat([Buffer.from('{"resourceSpans":[],"x":"'), Buffer.alloc(300_000, 0xff), Buffer.from('"}')]),
    status: 400,
  },
  { name: 'protobuf that is not a message', url: '/v1/traces', contentType: 'application/x-protobuf', body: () => Buffer.alloc(300_000, 0xff), status: 400 },
  {
    // 60,000 attributes of four fields each: a 413 from the wire count, before protobufjs builds an object.
    name: 'protobuf over MAX_PROTOBUF_FIELDS',
    url: '/v1/traces',
    contentType: 'application/x-protobuf',
    body: () => otlpProtobufWithAttributes(nextTraceId(), 60_000),
    status: 413,
  },
]

describe('large bodies decoded in worker threads', { timeout: 120_000 }, () => {
  for (const testCase of cases) {
    it(`answers as the main thread does: ${testCase.name}`, async () => {
      const body = large(testCase.body())
      const before = await workerDecodes(pooled)
      const [offThread, onThread] = [await post(pooled, testCase.url, testCase.contentType, body), await post(inline, testCase.url, testCase.contentType, body)]
      assert.equal(offThread.statusCode, testCase.status, offThread.body)
      assert.equal(offThread.statusCode, onThread.statusCode)
      assert.equal(offThread.headers['content-type'], onThread.headers['content-type'])
      assert.deepEqual(offThread.rawPayload, onThread.rawPayload)
      // A protobuf request is answered with a protobuf google.rpc.Status: its message is in there as UTF-8.
      if (testCase.status === 413) assert.ok(offThread.rawPayload.includes('body: more than 150000 protobuf fields in one request (MAX_PROTOBUF_FIELDS)'), offThread.body)
      assert.equal(await workerDecodes(pooled), before + 1, 'decoded by a worker')
    })
  }

  it('queues exactly the spans the answer counted, from the body as sent', async () => {
    const traceId = nextTraceId()
    const response = await post(pooled, '/v1/traces', 'application/json', large(otlpJson(traceSpans(traceId, 5_000, [7]))))
    assert.equal(response.statusCode, 200)
    const queued = (await pooled.queuedSpans()).filter(({ span }) => span.traceId === traceId)
    assert.equal(queued.length, 4_999)
    assert.ok(queued.every(({ projectId }) => projectId === pooled.tenant.projectId))
    assert.equal(queued.find(({ span }) => span.name === 'step 7'), undefined)
  })

  it('decodes a small body on the main thread: a worker round trip would cost more than the body', async () => {
    const before = await workerDecodes(pooled)
    const response = await post(pooled, '/v1/traces', 'application/json', otlpJson(traceSpans(nextTraceId(), 3)))
    assert.equal(response.statusCode, 200)
    assert.equal(await workerDecodes(pooled), before)
  })
})

describe('when every decode worker is busy', { timeout: 120_000 }, () => {
  let busy: IngestHarness
  before(async () => {
    busy = await startIngest({ DECODE_THREADS: '1' }, { database })
  })
  after(async () => {
    await busy?.close()
  })

  it('answers 503 with Retry-After beyond four waiting bodies a thread, and queues every span it answered 200 for', async () => {
    const traceIds = Array.from({ length: 16 }, () => nextTraceId())
    const bodies = traceIds.map((traceId) => otlpJson(traceSpans(traceId, 8_000)))
    const answers = await Promise.all(bodies.map((body) => post(busy, '/v1/traces', 'application/json', body)))
    const refused = answers.filter((answer) => answer.statusCode === 503)
    const accepted = answers.filter((answer) => answer.statusCode === 200)
    assert.equal(refused.length + accepted.length, answers.length, answers.map((answer) => answer.statusCode).join(' '))
    assert.ok(refused.length > 0, 'sixteen bodies at once fill one worker and its queue of four')
    for (const answer of refused) {
      assert.equal(answer.headers['retry-after'], '1')
      assert.deepEqual(answer.json(), { code: 14, message: 'Too many large bodies are waiting to be decoded; retry after 1 s' })
    }
    const queued = new Set((await busy.queuedSpans()).map(({ span }) => span.traceId))
    const stored = traceIds.filter((traceId) => queued.has(traceId))
    assert.equal(stored.length, accepted.length)
    const metrics = (await busy.app.inject('/metrics')).body
    assert.match(metrics, new RegExp(`^tracewell_ingest_worker_decodes_refused_total ${refused.length}$`, 'm'))
    // Counted as the decoders' refusals, not as the queue being unavailable.
    assert.match(metrics, new RegExp(`^tracewell_ingest_rejections_total\\{reason="decoders_busy"\\} ${refused.length}$`, 'm'))
    assert.doesNotMatch(metrics, /reason="queue_unavailable"/)
  })
})

describe('span limits from the settings', { timeout: 60_000 }, () => {
  let limited: IngestHarness
  before(async () => {
    limited = await startIngest({ SPAN_ATTRIBUTE_COUNT_LIMIT: '4', SPAN_EVENT_COUNT_LIMIT: '0' }, { database })
  })
  after(async () => {
    await limited?.close()
    configureSpanLimits(DEFAULT_SPAN_LIMITS)
  })

  it('keeps SPAN_ATTRIBUTE_COUNT_LIMIT attributes and no event with SPAN_EVENT_COUNT_LIMIT=0, counting the rest', async () => {
    const traceId = nextTraceId()
    const attributes = Array.from({ length: 10 }, (_, i) => ({ key: `attribute.${i}`, value: { stringValue: `v${i}` } }))
    const span = { ...traceSpans(traceId, 1)[0], attributes, events: [{ name: 'a', timeUnixNano: '1795316906845000000' }, { name: 'b', timeUnixNano: '1795316906845000000' }] }
    const response = await post(limited, '/v1/traces', 'application/json', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }))
    assert.equal(response.statusCode, 200, response.body)
    const [queued] = (await limited.queuedSpans()).filter(({ span: queuedSpan }) => queuedSpan.traceId === traceId)
    assert.deepEqual(Object.keys(queued?.span.attributes ?? {}), ['attribute.0', 'attribute.1', 'attribute.2', 'attribute.3', 'otel.dropped_attributes_count', 'otel.dropped_events_count'])
    assert.deepEqual(queued?.span.attributes['otel.dropped_attributes_count'], { intValue: '6' })
    assert.deepEqual(queued?.span.events, [])
  })
})
