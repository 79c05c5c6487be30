import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJsonTraces, decodeProtobufTraces, SpanKind } from '../src/index.ts'
import type { SpanRecord } from '../src/index.ts'
import { fixtureBytes, fixtureJson, fixtureText, requests } from './support/fixtures.ts'

// Every recorded client body decodes to exactly what the client meant (test-fixtures/README.md).

const STRING_LITERAL = String.raw`"((?:[^"\\]|\\.)*)"`
const MESSAGES_PATTERNS = [
  // OTLP JSON list form
  new RegExp(String.raw`"key"\s*:\s*"llm\.request\.messages"\s*,\s*"value"\s*:\s*\{\s*"stringValue"\s*:\s*` + STRING_LITERAL),
  // Langtrace plain attributes
  new RegExp(String.raw`"llm\.request\.messages"\s*:\s*` + STRING_LITERAL),
]

/** The `llm.request.messages` string literal exactly as it is written in the fixture file. */
function rawMessagesLiteral(fixture: string): string {
  const text = fixtureText(fixture)
  for (const pattern of MESSAGES_PATTERNS) {
    const literal = pattern.exec(text)?.[1]
    if (literal !== undefined) return literal
  }
  assert.fail(`no llm.request.messages in ${fixture}`)
}

/** Asserts the decoded messages are the sent string, and re-encode to the very bytes sent. */
function assertMessagesIntact(span: SpanRecord, fixture: string): void {
  const literal = rawMessagesLiteral(fixture)
  const decoded = stringAttribute(span, 'llm.request.messages')
  assert.equal(decoded, JSON.parse(`"${literal}"`))
  assert.equal(JSON.stringify(decoded), `"${literal}"`)
}

function spanById(spans: SpanRecord[], spanId: string): SpanRecord {
  const span = spans.find((s) => s.spanId === spanId)
  assert.ok(span, `span ${spanId} not decoded`)
  return span
}

function stringAttribute(span: SpanRecord, key: string): string | undefined {
  const value = span.attributes[key]
  return value !== undefined && 'stringValue' in value ? value.stringValue : undefined
}

describe('OTel JS OTLP/HTTP JSON exporter', () => {
  const [rootId, childId] = requests.traces.otlpJson.spanIds as [string, string]
  const child = decodeJsonTraces(fixtureJson('otel-js-otlp-json-1.json'))
  const root = decodeJsonTraces(fixtureJson('otel-js-otlp-json-2.json'))

  it('is recognised as OTLP JSON', () => {
    assert.equal(child.format, 'otlp-json')
    assert.equal(root.format, 'otlp-json')
    assert.equal(child.spans.length, 1)
    assert.equal(root.spans.length, 1)
  })

  it('keeps ids, parentage, names, kinds and exact times', () => {
    const span = spanById(child.spans, childId)
    assert.equal(span.traceId, requests.traces.otlpJson.traceId)
    assert.equal(span.parentSpanId, rootId)
    assert.equal(span.name, 'openai.chat')
    assert.equal(span.kind, SpanKind.CLIENT)
    assert.equal(span.startTimeUnixNano, '1795316906845000000')
    assert.equal(span.endTimeUnixNano, '1795316906845338304')
    assert.equal(span.durationNs, '338304')
    const parent = spanById(root.spans, rootId)
    assert.equal(parent.traceId, requests.traces.otlpJson.traceId)
    assert.equal(parent.parentSpanId, null)
    assert.equal(parent.name, 'handle-request')
    assert.equal(parent.kind, SpanKind.INTERNAL)
  })

  it('keeps every attribute kind, events and scope', () => {
    const span = spanById(child.spans, childId)
    assert.deepEqual(span.attributes['llm.usage.prompt_tokens'], { intValue: '42' })
    assert.deepEqual(span.attributes['bars.flag'], { boolValue: true })
    assert.deepEqual(span.attributes['bars.ratio'], { doubleValue: 0.25 })
    assert.deepEqual(span.attributes['bars.tags'], { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } })
    assert.deepEqual(span.events, [
      { timeUnixNano: '1795316906845261580', name: 'first-token', attributes: { 'bars.index': { intValue: '1' } } },
    ])
    assert.equal(span.scopeName, 'bars-acceptance')
    assert.equal(span.scopeVersion, '1.0.0')
    assert.equal(span.statusCode, 0)
  })

  it('derives service and LLM columns', () => {
    const span = spanById(child.spans, childId)
    assert.equal(span.serviceName, 'checkout-service')
    assert.equal(span.serviceVersion, '2.0.0')
    assert.equal(span.llmVendor, 'openai')
    assert.equal(span.llmModel, 'gpt-4o')
    assert.equal(span.llmRequestType, 'chat') // llm.request.type chat_completion, in the OTel vocabulary
    assert.equal(span.inputTokens, 42)
    assert.equal(span.outputTokens, 7) // from gen_ai.usage.output_tokens
    assert.equal(span.totalTokens, 49)
  })

  it('keeps llm.request.messages byte for byte', () => {
    const span = spanById(child.spans, childId)
    assertMessagesIntact(span, 'otel-js-otlp-json-1.json')
    assert.ok(stringAttribute(span, 'llm.request.messages')?.includes('Quote \\"exactly\\" & keep \\\\ escapes, ünïcødé ✓'))
  })
})

describe('OTel JS OTLP/HTTP protobuf exporter', () => {
  const [rootId, childId] = requests.traces.otlpProto.spanIds as [string, string]
  const first = decodeProtobufTraces(fixtureBytes('otel-js-otlp-proto-1.bin'))
  const second = decodeProtobufTraces(fixtureBytes('otel-js-otlp-proto-2.bin'))
  const spans = [...first.spans, ...second.spans]

  it('decodes both requests', () => {
    assert.equal(first.format, 'otlp-protobuf')
    assert.equal(spans.length, 2)
    for (const span of spans) assert.equal(span.traceId, requests.traces.otlpProto.traceId)
  })

  it('turns byte ids into lowercase hex and fixed64 times into exact strings', () => {
    const child = spanById(spans, childId)
    assert.equal(child.parentSpanId, rootId)
    assert.equal(child.name, 'openai.chat')
    assert.equal(child.kind, SpanKind.CLIENT)
    assert.equal(child.startTimeUnixNano, '1795316906862000000')
    assert.equal(child.endTimeUnixNano, '1795316906862127559')
    assert.equal(child.durationNs, '127559')
    const root = spanById(spans, rootId)
    assert.equal(root.parentSpanId, null)
    assert.equal(root.name, 'handle-request')
    assert.equal(root.kind, SpanKind.INTERNAL)
    assert.equal(root.endTimeUnixNano, '1795316906863874005')
  })

  it('reads int64 attributes as decimal strings and derives the same columns as JSON', () => {
    const child = spanById(spans, childId)
    assert.deepEqual(child.attributes['llm.usage.prompt_tokens'], { intValue: '42' })
    assert.deepEqual(child.events[0]?.attributes, { 'bars.index': { intValue: '1' } })
    assert.equal(child.serviceName, 'checkout-service')
    assert.equal(child.llmVendor, 'openai')
    assert.equal(child.llmModel, 'gpt-4o')
    assert.equal(child.inputTokens, 42)
    assert.equal(child.outputTokens, 7)
    assert.equal(child.totalTokens, 49)
    assertMessagesIntact(child, 'otel-js-otlp-json-1.json')
  })

  it('decodes to the same records as the JSON exporter did for the same span shape', () => {
    const fromJson = decodeJsonTraces(fixtureJson('otel-js-otlp-json-1.json')).spans[0]
    const fromProto = spanById(spans, childId)
    assert.ok(fromJson)
    assert.deepEqual(Object.keys(fromProto).sort(), Object.keys(fromJson).sort())
    assert.deepEqual(fromProto.attributes, fromJson.attributes)
    assert.deepEqual(fromProto.resourceAttributes, fromJson.resourceAttributes)
  })
})

describe('Langtrace TypeScript SDK', () => {
  const [rootId, childId] = requests.traces.langtraceTs.spanIds as [string, string]
  const child = decodeJsonTraces(fixtureJson('langtrace-ts-sdk-1.json'))
  const root = decodeJsonTraces(fixtureJson('langtrace-ts-sdk-2.json'))

  it('is recognised as the Langtrace array format', () => {
    assert.equal(child.format, 'langtrace-json')
    assert.equal(root.format, 'langtrace-json')
  })

  it('maps JS span kinds to OTLP and HrTime to exact nanoseconds', () => {
    const span = spanById(child.spans, childId)
    assert.equal(span.traceId, requests.traces.langtraceTs.traceId)
    assert.equal(span.parentSpanId, rootId)
    assert.equal(span.name, 'anthropic.messages.create')
    assert.equal(span.kind, SpanKind.CLIENT) // JS 2
    assert.equal(span.startTimeUnixNano, '1795316906958000000')
    assert.equal(span.endTimeUnixNano, '1795316906958178765')
    assert.equal(span.durationNs, '178765')
    const parent = spanById(root.spans, rootId)
    assert.equal(parent.parentSpanId, null)
    assert.equal(parent.kind, SpanKind.INTERNAL) // JS 0
    assert.equal(parent.endTimeUnixNano, '1795316906964032071')
  })

  it('reads the serialised Resource and instrumentation library', () => {
    const span = spanById(child.spans, childId)
    assert.deepEqual(span.resourceAttributes['telemetry.sdk.version'], { stringValue: '1.30.1' })
    assert.equal(span.serviceName, 'checkout-service')
    assert.equal(span.scopeName, 'langtrace-ts-sdk')
    assert.equal(span.scopeVersion, null)
  })

  it('derives LLM columns and keeps the messages byte for byte', () => {
    const span = spanById(child.spans, childId)
    assert.equal(span.llmVendor, 'anthropic')
    assert.equal(span.llmModel, 'claude-3-haiku')
    assert.equal(span.llmRequestType, 'chat') // llm.request.type chat_completion, in the OTel vocabulary
    assert.equal(span.inputTokens, null)
    assert.equal(span.totalTokens, null)
    assertMessagesIntact(span, 'langtrace-ts-sdk-1.json')
  })
})

describe('Langtrace Python SDK before 3.3', () => {
  const { format, spans } = decodeJsonTraces(fixtureJson('langtrace-python-legacy.json'))

  it('reads 0x-hex context ids, parent_id and SpanKind strings', () => {
    assert.equal(format, 'langtrace-json')
    assert.equal(spans.length, 2)
    const llm = spanById(spans, '00f067aa0ba902b7')
    assert.equal(llm.traceId, '4bf92f3577b34da6a3ce929d0e0e4736')
    assert.equal(llm.parentSpanId, '53995c3f42cd8ad8')
    assert.equal(llm.kind, SpanKind.CLIENT)
    assert.equal(llm.traceState, null) // repr of an empty TraceState: "[]"
    const root = spanById(spans, '53995c3f42cd8ad8')
    assert.equal(root.parentSpanId, null)
    assert.equal(root.kind, SpanKind.INTERNAL)
    assert.equal(root.statusCode, 1)
  })

  it('converts ISO times to exact nanoseconds', () => {
    const llm = spanById(spans, '00f067aa0ba902b7')
    assert.equal(llm.startTimeUnixNano, '1732137930275984000')
    assert.equal(llm.endTimeUnixNano, '1732137931083383000')
    assert.equal(llm.durationNs, '807399000')
    assert.equal(llm.events[0]?.timeUnixNano, '1732137930300000000')
    assert.equal(llm.events[0]?.name, 'stream.start')
  })

  it('derives vendor, model, request type and tokens 14/2/16', () => {
    const llm = spanById(spans, '00f067aa0ba902b7')
    assert.equal(llm.serviceName, 'support-bot')
    assert.equal(llm.llmVendor, 'openai')
    assert.equal(llm.llmModel, 'gpt-4o')
    assert.equal(llm.llmRequestType, 'chat') // llm.request.type chat_completion, in the OTel vocabulary
    assert.equal(llm.inputTokens, 14)
    assert.equal(llm.outputTokens, 2)
    assert.equal(llm.totalTokens, 16)
  })

  it('types plain attribute values', () => {
    const llm = spanById(spans, '00f067aa0ba902b7')
    assert.deepEqual(llm.attributes['llm.usage.prompt_tokens'], { intValue: '14' })
    assert.deepEqual(llm.attributes['llm.request.stream'], { boolValue: false })
    assert.deepEqual(llm.attributes['llm.request.temperature'], { doubleValue: 0.7 })
    assertMessagesIntact(llm, 'langtrace-python-legacy.json')
    assert.equal(stringAttribute(llm, 'llm.response.choices'), '[{"role": "assistant", "content": "Paris."}]')
  })
})

describe('records', () => {
  it('survive a JSON round trip unchanged (they travel through Redis)', () => {
    for (const name of ['otel-js-otlp-json-1.json', 'langtrace-ts-sdk-1.json', 'langtrace-python-legacy.json']) {
      const { spans } = decodeJsonTraces(fixtureJson(name))
      assert.deepEqual(JSON.parse(JSON.stringify(spans)), spans, name)
    }
    const { spans } = decodeProtobufTraces(fixtureBytes('otel-js-otlp-proto-1.bin'))
    assert.deepEqual(JSON.parse(JSON.stringify(spans)), spans)
  })
})
