import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { configureSpanLimits, decodeTraceBody, DEFAULT_SPAN_LIMITS, TRUNCATION_MARKER, type SpanRecord } from '../src/index.ts'
import { toOtlpJson, toProtobuf, type ModelBatch, type ModelKeyValue } from './support/random-batch.ts'

// OpenTelemetry's span limits (128 attributes, events and links; 128 attributes per event and
// link), applied the same whatever the body's form, with what was dropped counted on the span;
// and the cost of a span of a million attributes bounded by the limit, not by the attributes.

const attributes = (count: number, prefix = 'attr'): ModelKeyValue[] =>
  Array.from({ length: count }, (_, i) => ({ key: `${prefix}.${String(i).padStart(4, '0')}`, value: { kind: 'string', value: `v${i}` } }))

const id = (byte: number, length: number) => new Uint8Array(length).fill(byte)

function hugeBatch(): ModelBatch {
  return {
    resources: [{
      attributes: [{ key: 'service.name', value: { kind: 'string', value: 'svc' } }, ...attributes(200, 'res')],
      scopes: [{
        scope: { name: 'scope', version: '1' },
        spans: [{
          traceId: id(1, 16), spanId: id(2, 8), parentSpanId: null, name: 'huge', kind: 1, start: 1_700_000_000_000_000_000n, end: 1_700_000_001_000_000_000n,
          traceState: '', status: null,
          attributes: [
            { key: 'gen_ai.request.model', value: { kind: 'string', value: 'gpt-4o' } },
            { key: 'gen_ai.usage.input_tokens', value: { kind: 'int', value: 7n } },
            ...attributes(300),
          ],
          events: Array.from({ length: 130 }, (_, i) => ({ time: 1_700_000_000_500_000_000n, name: `e${i}`, attributes: i === 0 ? attributes(129) : [] })),
          links: Array.from({ length: 140 }, (_, i) => ({ traceId: id(3, 16), spanId: id(4 + (i % 200), 8), traceState: '', attributes: i === 1 ? attributes(131) : [] })),
        }],
      }],
    }],
  }
}

function langtraceBody(): unknown[] {
  const plain = (count: number, prefix = 'attr') => Object.fromEntries(attributes(count, prefix).map(({ key }, i) => [key, `v${i}`]))
  return [{
    traceId: '01'.repeat(16), spanId: '02'.repeat(8), name: 'huge', kind: 0, startTime: [1_700_000_000, 0], endTime: [1_700_000_001, 0],
    attributes: { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 7, ...plain(300) },
    resource: { attributes: { 'service.name': 'svc', ...plain(200, 'res') } },
    events: Array.from({ length: 130 }, (_, i) => ({ name: `e${i}`, time: [1_700_000_000, 500_000_000], attributes: i === 0 ? plain(129) : {} })),
    links: Array.from({ length: 140 }, (_, i) => ({ context: { traceId: '03'.repeat(16), spanId: (4 + (i % 200)).toString(16).padStart(2, '0').repeat(8) }, attributes: i === 1 ? plain(131) : {} })),
  }]
}

const bodies: Array<[string, () => SpanRecord]> = [
  ['OTLP JSON, list form', () => decodeTraceBody(Buffer.from(JSON.stringify(toOtlpJson(hugeBatch(), 'list', 1))), 'json').spans[0] as SpanRecord],
  ['OTLP JSON, map form', () => decodeTraceBody(Buffer.from(JSON.stringify(toOtlpJson(hugeBatch(), 'map', 1))), 'json').spans[0] as SpanRecord],
  ['OTLP protobuf', () => decodeTraceBody(toProtobuf(hugeBatch()), 'protobuf').spans[0] as SpanRecord],
  ['Langtrace array', () => decodeTraceBody(Buffer.from(JSON.stringify(langtraceBody())), 'json').spans[0] as SpanRecord],
]

describe('span limits', () => {
  for (const [form, decode] of bodies) {
    it(`keeps the first 128 of each and counts the rest: ${form}`, () => {
      const span = decode()
      const keys = Object.keys(span.attributes)
      assert.equal(keys.length, 128 + 3, 'the kept attributes and the three dropped counts')
      assert.deepEqual(keys.slice(0, 3), ['gen_ai.request.model', 'gen_ai.usage.input_tokens', 'attr.0000'])
      assert.equal(keys[127], 'attr.0125', 'the first 128 as sent')
      assert.deepEqual(span.attributes['otel.dropped_attributes_count'], { intValue: '174' })
      assert.deepEqual(span.attributes['otel.dropped_events_count'], { intValue: '2' })
      assert.deepEqual(span.attributes['otel.dropped_links_count'], { intValue: '12' })
      assert.equal(span.events.length, 128)
      assert.equal(span.events[127]?.name, 'e127')
      assert.equal(Object.keys(span.events[0]?.attributes ?? {}).length, 129)
      assert.deepEqual(span.events[0]?.attributes['otel.dropped_attributes_count'], { intValue: '1' })
      assert.equal(span.links.length, 128)
      assert.deepEqual(span.links[1]?.attributes['otel.dropped_attributes_count'], { intValue: '3' })
      assert.equal(Object.keys(span.resourceAttributes).length, 129)
      assert.deepEqual(span.resourceAttributes['otel.dropped_attributes_count'], { intValue: '73' })
      // Derived from the kept attributes.
      assert.equal(span.llmModel, 'gpt-4o')
      assert.equal(span.inputTokens, 7)
      assert.equal(span.serviceName, 'svc')
    })
  }

  it('leaves a span within the limits as it was, without a copy', () => {
    const batch = hugeBatch()
    const span = batch.resources[0]!.scopes[0]!.spans[0]!
    span.attributes = attributes(128)
    span.events = span.events.slice(0, 128).map((event) => ({ ...event, attributes: attributes(2) }))
    span.links = []
    batch.resources[0]!.attributes = attributes(3, 'res')
    const decoded = decodeTraceBody(Buffer.from(JSON.stringify(toOtlpJson(batch, 'map', 2))), 'json').spans[0] as SpanRecord
    assert.equal(Object.keys(decoded.attributes).length, 128)
    assert.equal(decoded.attributes['otel.dropped_attributes_count'], undefined)
    assert.equal(decoded.events.length, 128)
    assert.equal(Object.keys(decoded.resourceAttributes).length, 3)
  })
})

describe('span limits set by the settings (SPAN_*_LIMIT, ATTRIBUTE_VALUE_LENGTH_LIMIT)', () => {
  afterEach(() => configureSpanLimits(DEFAULT_SPAN_LIMITS))

  for (const [form, decode] of bodies) {
    it(`keeps what the configured limits allow and counts the rest: ${form}`, () => {
      configureSpanLimits({ attributeCount: 5, eventCount: 3, linkCount: 0, attributeValueLength: 2_000 })
      const span = decode()
      assert.deepEqual(Object.keys(span.attributes).slice(0, 5), ['gen_ai.request.model', 'gen_ai.usage.input_tokens', 'attr.0000', 'attr.0001', 'attr.0002'])
      assert.deepEqual(span.attributes['otel.dropped_attributes_count'], { intValue: '297' })
      assert.deepEqual(span.attributes['otel.dropped_events_count'], { intValue: '127' })
      assert.deepEqual(span.attributes['otel.dropped_links_count'], { intValue: '140' })
      assert.deepEqual(span.events.map((event) => event.name), ['e0', 'e1', 'e2'])
      assert.deepEqual(span.events[0]?.attributes['otel.dropped_attributes_count'], { intValue: '124' })
      assert.deepEqual(span.links, [])
      assert.deepEqual(span.resourceAttributes['otel.dropped_attributes_count'], { intValue: '196' })
    })
  }

  it('cuts a string value at the configured length, marker included', () => {
    configureSpanLimits({ ...DEFAULT_SPAN_LIMITS, attributeValueLength: 2_000 })
    const batch = hugeBatch()
    batch.resources[0]!.scopes[0]!.spans[0]!.attributes = [{ key: 'gen_ai.prompt', value: { kind: 'string', value: 'p'.repeat(5_000) } }]
    const span = decodeTraceBody(Buffer.from(JSON.stringify(toOtlpJson(batch, 'map', 1))), 'json').spans[0] as SpanRecord
    const cut = (span.attributes['gen_ai.prompt'] as { stringValue: string }).stringValue
    assert.equal(cut.length, 2_000)
    assert.ok(cut.endsWith(`${TRUNCATION_MARKER}5000]`), cut.slice(-60))
  })
})

describe('a span of a million attributes', () => {
  it('costs little more than its JSON parse: the attributes past the limit are only counted', () => {
    const attrs: Record<string, string> = {}
    for (let i = 0; i < 999_000; i++) attrs[`a${i}`] = 'x'
    const body = Buffer.from(JSON.stringify([{ traceId: '01'.repeat(16), spanId: '02'.repeat(8), name: 'h', kind: 0, startTime: [1_700_000_000, 0], endTime: [1_700_000_001, 0], attributes: attrs }]))
    const span = decodeTraceBody(body, 'json').spans[0] as SpanRecord
    assert.equal(Object.keys(span.attributes).length, 129)
    assert.deepEqual(span.attributes['otel.dropped_attributes_count'], { intValue: '998872' })
    // What the writer stores and every read returns: a few KB, not 29.9 MB.
    assert.ok(JSON.stringify(span).length < 10_000)
  })
})
