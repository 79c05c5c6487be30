import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { findTraceSpans, insertSerializedSpanRows, insertSpans, nanosToIsoMicros, serializeSpanRows, type Db, type SpanInsert } from '../src/index.ts'
import { engines } from './engines.ts'

type SpanFields = Omit<SpanInsert, 'projectId'>

// The row object the insert parameter was built from before serializeSpanRows existed, written
// out independently so the serialiser is checked against it, not against itself.
function referenceRow(projectId: string, span: SpanFields) {
  return {
    project_id: projectId, trace_id: span.traceId, span_id: span.spanId, parent_span_id: span.parentSpanId, name: span.name,
    kind: span.kind, start_time: nanosToIsoMicros(span.startTimeUnixNano), end_time: nanosToIsoMicros(span.endTimeUnixNano),
    duration_ns: span.durationNs, trace_state: span.traceState, status_code: span.statusCode, status_message: span.statusMessage,
    service_name: span.serviceName, service_version: span.serviceVersion, scope_name: span.scopeName, scope_version: span.scopeVersion,
    llm_vendor: span.llmVendor, llm_model: span.llmModel, llm_request_type: span.llmRequestType, input_tokens: span.inputTokens,
    output_tokens: span.outputTokens, total_tokens: span.totalTokens, attributes: span.attributes,
    resource_attributes: span.resourceAttributes, events: span.events, links: span.links,
  }
}
const referenceRows = (projectId: string, spans: SpanFields[]) => JSON.stringify(spans.map((span) => referenceRow(projectId, span)))

let seed = 42
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31)
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T
// Quotes, backslashes, control characters, non-ASCII, astral characters: everything JSON escapes
// or passes through. \u0000 only where the text does not go into Postgres (jsonb refuses it).
const pieces = ['"', '\\', '\n', '\r', '\t', '\b', '\f', '\u0001', '\u001f', '\u007f', '\u2028', 'é', '✓', 'Zoë', '日本', '😀', '{"a":1}', '},{', ' ', 'x']
function text(withNul: boolean): string {
  let value = ''
  for (let i = Math.floor(random() * 12); i > 0; i--) value += pick(withNul ? [...pieces, '\u0000'] : pieces)
  return value
}
const orNull = <T>(value: T): T | null => (random() < 0.3 ? null : value)

function randomSpan(withNul: boolean): SpanFields {
  const start = 1_700_000_000_000_000_000n + BigInt(Math.floor(random() * 1e15))
  const duration = BigInt(Math.floor(random() * 1e12))
  return {
    traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), parentSpanId: orNull(randomBytes(8).toString('hex')),
    name: text(withNul), kind: Math.floor(random() * 6), startTimeUnixNano: `${start}`, endTimeUnixNano: `${start + duration}`,
    durationNs: `${duration}`, traceState: orNull(text(withNul)), statusCode: Math.floor(random() * 3), statusMessage: orNull(text(withNul)),
    serviceName: orNull(text(withNul)), serviceVersion: orNull('1.0'), scopeName: orNull(text(withNul)), scopeVersion: orNull('2'),
    llmVendor: orNull('openai'), llmModel: orNull(text(withNul)), llmRequestType: orNull('chat'),
    inputTokens: orNull(Math.floor(random() * 1e6)), outputTokens: orNull(7), totalTokens: orNull(2 ** 40),
    attributes: { [text(withNul)]: { stringValue: text(withNul) }, 'n': { doubleValue: random() }, 'i': { intValue: '-9007199254740993' } },
    resourceAttributes: { 'service.name': { stringValue: text(withNul) } },
    events: random() < 0.5 ? [] : [{ timeUnixNano: `${start}`, name: text(withNul), attributes: { [text(withNul)]: { boolValue: true } } }],
    links: random() < 0.7 ? [] : [{ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), traceState: null, attributes: {} }],
  }
}

describe('serializeSpanRows', () => {
  it('is exactly the JSON.stringify of the row objects, without the brackets', () => {
    for (let round = 0; round < 200; round++) {
      const spans = Array.from({ length: 1 + Math.floor(random() * 5) }, () => randomSpan(true))
      const projectId = pick(['proj', 'p"q', 'Zoë\\\n'])
      assert.equal(`[${serializeSpanRows(projectId, spans)}]`, referenceRows(projectId, spans))
    }
  })

  it('makes chunks that join with "," into the JSON of all their rows', () => {
    const a = Array.from({ length: 3 }, () => randomSpan(true))
    const b = Array.from({ length: 2 }, () => randomSpan(true))
    const joined = `[${[serializeSpanRows('a', a), serializeSpanRows('b', b)].join(',')}]`
    assert.equal(joined, `[${referenceRows('a', a).slice(1, -1)},${referenceRows('b', b).slice(1, -1)}]`)
    assert.deepEqual(JSON.parse(joined), [...a.map((span) => referenceRow('a', span)), ...b.map((span) => referenceRow('b', span))])
    assert.equal(serializeSpanRows('a', []), '')
  })
})

for (const engine of engines) {
  describe(`insertSerializedSpanRows on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('stores every field of awkward text exactly as insertSpans does, idempotently', async () => {
      const spans = Array.from({ length: 40 }, () => randomSpan(false))
      const half = spans.slice(0, 20)
      assert.equal(await insertSerializedSpanRows(db, [serializeSpanRows('serialized', half.slice(0, 7)), serializeSpanRows('serialized', half.slice(7))]), 20)
      assert.equal(await insertSerializedSpanRows(db, [serializeSpanRows('serialized', spans)]), 20, 'the first 20 were already stored')
      assert.equal(await insertSerializedSpanRows(db, ['', '']), 0)
      assert.equal(await insertSpans(db, spans.map((span) => ({ ...span, projectId: 'records' }))), 40)
      for (const span of spans) {
        const [viaRows] = await findTraceSpans(db, 'serialized', span.traceId)
        const [viaRecords] = await findTraceSpans(db, 'records', span.traceId)
        assert.ok(viaRows && viaRecords)
        assert.deepEqual({ ...viaRows, receivedAt: '' }, { ...viaRecords, receivedAt: '' })
        assert.equal(viaRows.name, span.name)
        assert.deepEqual(viaRows.attributes, span.attributes)
        assert.deepEqual(viaRows.events, span.events)
      }
    })

    it('rejects malformed row text with a data exception', async () => {
      await assert.rejects(insertSerializedSpanRows(db, ['{"project_id":"x",']), (error: { code?: string }) => /^22/.test(error.code ?? ''))
    })
  })
}
