import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SpanRecord } from '@tracewell/otlp'
import { clientBodies, encodings, type ExpectedSpan } from './support/fixtures.ts'
import { startIngest, type IngestHarness } from './support/ingest-harness.ts'
import { StatusMessage } from '../src/otlp/otlp-status.ts'

// Every body format a real client sends (test-fixtures), plain, gzip and deflate, on both
// paths: the exact success answer, and the spans in Redis as the writer will read them.

const TRACES_RECEIVED = '{"status":200,"message":"Traces received successfully"}'

let ingest: IngestHarness
before(async () => {
  ingest = await startIngest()
})
after(async () => {
  await ingest.close()
})

async function queuedMatching(expected: ExpectedSpan): Promise<Array<{ projectId: string; span: SpanRecord }>> {
  const queued = await ingest.queuedSpans()
  return queued.filter(({ span }) => span.traceId === expected.traceId && span.spanId === expected.spanId) as Array<{ projectId: string; span: SpanRecord }>
}

function assertSpan(span: SpanRecord, expected: ExpectedSpan): void {
  assert.match(span.traceId, /^[0-9a-f]{32}$/)
  assert.match(span.spanId, /^[0-9a-f]{16}$/)
  assert.equal(span.serviceName, expected.serviceName)
  assert.equal(span.llmVendor, expected.llmVendor)
  assert.equal(span.llmModel, expected.llmModel)
  assert.equal(span.inputTokens, expected.inputTokens)
  assert.equal(span.outputTokens, expected.outputTokens)
  const messages = span.attributes['llm.request.messages']
  if (expected.messages === null) assert.equal(messages, undefined)
  else assert.deepEqual(messages, { stringValue: expected.messages })
}

async function post(url: string, contentType: string, encoding: keyof typeof encodings, body: Buffer) {
  const headers: Record<string, string> = { 'x-api-key': ingest.tenant.projectKey, 'content-type': contentType }
  if (encoding !== 'identity') headers['content-encoding'] = encoding
  return ingest.app.inject({ method: 'POST', url, headers, body: encodings[encoding](body) })
}

describe('POST /api/trace accepts every client body', () => {
  for (const fixture of clientBodies) {
    for (const encoding of Object.keys(encodings) as Array<keyof typeof encodings>) {
      it(`${fixture.name} (${encoding})`, async () => {
        const before = await Promise.all(fixture.spans.map((span) => queuedMatching(span)))
        const response = await post('/api/trace', fixture.contentType, encoding, fixture.body)
        assert.equal(response.statusCode, 200)
        if (fixture.contentType === 'application/x-protobuf') {
          // Answered in the request's encoding: an ExportTraceServiceResponse, zero bytes on full success.
          assert.equal(response.headers['content-type'], 'application/x-protobuf')
          assert.equal(response.rawPayload.length, 0)
        } else {
          assert.equal(response.body, TRACES_RECEIVED)
          assert.match(String(response.headers['content-type']), /^application\/json/)
        }
        for (const [index, expected] of fixture.spans.entries()) {
          const matching = await queuedMatching(expected)
          assert.equal(matching.length, (before[index]?.length ?? 0) + 1, 'the span is in Redis once more')
          const latest = matching.at(-1)
          assert.ok(latest)
          assert.equal(latest.projectId, ingest.tenant.projectId)
          assertSpan(latest.span, expected)
        }
      })
    }
  }
})

describe('POST /v1/traces answers in the encoding of the request (OTLP/HTTP)', () => {
  for (const fixture of clientBodies.filter((body) => body.name.startsWith('otel-js') || body.name.startsWith('seed'))) {
    for (const encoding of ['identity', 'gzip'] as const) {
      it(`${fixture.name} (${encoding})`, async () => {
        const expected = fixture.spans[0] as ExpectedSpan
        const count = (await queuedMatching(expected)).length
        const response = await post('/v1/traces', fixture.contentType, encoding, fixture.body)
        assert.equal(response.statusCode, 200)
        if (fixture.contentType === 'application/x-protobuf') {
          // An ExportTraceServiceResponse with partial_success unset encodes to zero bytes.
          assert.equal(response.headers['content-type'], 'application/x-protobuf')
          assert.equal(response.rawPayload.length, 0)
        } else {
          assert.match(String(response.headers['content-type']), /^application\/json/)
          assert.equal(response.body, '{}')
        }
        const matching = await queuedMatching(expected)
        assert.equal(matching.length, count + 1)
        assertSpan((matching.at(-1) as { span: SpanRecord }).span, expected)
      })
    }
  }

  it('accepts application/protobuf and a charset parameter', async () => {
    const proto = clientBodies[0] as (typeof clientBodies)[number]
    const json = clientBodies[2] as (typeof clientBodies)[number]
    const a = await post('/v1/traces', 'application/protobuf', 'identity', proto.body)
    assert.equal(a.statusCode, 200)
    const b = await post('/api/trace', 'Application/JSON; charset=utf-8', 'identity', json.body)
    assert.equal(b.statusCode, 200)
    assert.equal(b.body, TRACES_RECEIVED)
  })

  it('reads the body under every spelling of its media type the content checks let through', async () => {
    const proto = clientBodies[0] as (typeof clientBodies)[number]
    const json = clientBodies[2] as (typeof clientBodies)[number]
    const spellings = [
      ['/api/trace', 'application/json', json],
      ['/api/trace', 'APPLICATION/JSON', json],
      ['/api/trace', 'application/json;', json],
      ['/api/trace', 'application/json ; charset=utf-8', json],
      ['/v1/traces', 'application/x-protobuf', proto],
      ['/v1/traces', 'Application/X-Protobuf; proto=opentelemetry', proto],
    ] as const
    for (const [url, contentType, client] of spellings) {
      const before = (await ingest.queuedSpans()).length
      const response = await post(url, contentType, 'identity', client.body)
      assert.equal(response.statusCode, 200, contentType)
      assert.ok((await ingest.queuedSpans()).length > before, `${contentType}: spans queued`)
    }
  })

  it('answers an empty protobuf request with success, storing nothing', async () => {
    const count = (await ingest.queuedSpans()).length
    const response = await post('/v1/traces', 'application/x-protobuf', 'identity', Buffer.alloc(0))
    assert.equal(response.statusCode, 200)
    assert.equal(response.rawPayload.length, 0)
    assert.equal((await ingest.queuedSpans()).length, count)
  })
})

describe('empty batches', () => {
  it('answer 200 and enqueue nothing', async () => {
    const count = (await ingest.queuedSpans()).length
    for (const body of ['{"resourceSpans":[]}', '[]', '{"resourceSpans":[{"resource":{"attributes":{}},"scopeSpans":[]}]}']) {
      const response = await post('/api/trace', 'application/json', 'gzip', Buffer.from(body))
      assert.equal(response.statusCode, 200, body)
      assert.equal(response.body, TRACES_RECEIVED)
    }
    assert.equal((await ingest.queuedSpans()).length, count)
  })
})

describe('the OTLP Status decoder used by these tests', () => {
  it('round-trips', () => {
    const bytes = StatusMessage.encode(StatusMessage.create({ code: 3, message: 'x' })).finish()
    assert.deepEqual(StatusMessage.toObject(StatusMessage.decode(bytes)), { code: 3, message: 'x' })
  })
})

describe('documentation', () => {
  it('publishes both routes in the OpenAPI document', async () => {
    const response = await ingest.app.inject('/docs/json')
    assert.equal(response.statusCode, 200)
    const paths = response.json<{ paths: Record<string, { post?: { responses: Record<string, unknown> } }> }>().paths
    for (const path of ['/api/trace', '/v1/traces']) {
      assert.deepEqual(Object.keys(paths[path]?.post?.responses ?? {}).sort(), ['200', '400', '401', '413', '415', '429', '500', '503'])
    }
  })
})
