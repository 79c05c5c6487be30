import protobuf from 'protobufjs'

// Bodies an exporter would never send (a span id of the wrong length), to test how ingest refuses
// invalid spans one by one.

let traceCounter = 0
/** A fresh trace id per call, so tests in one file never read each other's spans. */
export const nextTraceId = (): string => (++traceCounter).toString(16).padStart(32, 'a')
const spanId = (i: number) => (i + 1).toString(16).padStart(16, '0')

export interface TestSpan {
  traceId: string
  spanId: string
  name: string
  startTimeUnixNano: string
  endTimeUnixNano: string
}

/** Spans of one trace named `step <i>`; those at `invalid` positions have a span id of the wrong length. */
export function traceSpans(traceId: string, count: number, invalid: number[] = []): TestSpan[] {
  return Array.from({ length: count }, (_, i) => ({
    traceId,
    spanId: invalid.includes(i) ? 'abc' : spanId(i),
    name: `step ${i}`,
    startTimeUnixNano: '1795316906845000000',
    endTimeUnixNano: '1795316906945000000',
  }))
}

export const otlpJson = (spans: TestSpan[]): string => JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] })

// The few fields of opentelemetry-proto's ExportTraceServiceRequest these bodies need.
const root = protobuf.parse(`
  syntax = "proto3";
  message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
  message ResourceSpans { repeated ScopeSpans scope_spans = 2; }
  message ScopeSpans { repeated Span spans = 2; }
  message Span { bytes trace_id = 1; bytes span_id = 2; string name = 5; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; }
  message KeyValue { string key = 1; AnyValue value = 2; }
  message AnyValue { string string_value = 1; }
`).root
const ExportRequest = root.lookupType('ExportTraceServiceRequest')

/** An ExportTraceServiceRequest of `spans`; an invalid span id is sent as 3 bytes. */
export function otlpProtobuf(spans: TestSpan[]): Buffer {
  const message = ExportRequest.fromObject({
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: spans.map((span) => ({
              traceId: Buffer.from(span.traceId, 'hex'),
              spanId: span.spanId === 'abc' ? Buffer.from([1, 2, 3]) : Buffer.from(span.spanId, 'hex'),
              name: span.name,
              startTimeUnixNano: span.startTimeUnixNano,
              endTimeUnixNano: span.endTimeUnixNano,
            })),
          },
        ],
      },
    ],
  })
  return Buffer.from(ExportRequest.encode(message).finish())
}

export const jsonProblem = (i: number): string => `resourceSpans[0].scopeSpans[0].spans[${i}].spanId: expected 16 hex characters`
export const protobufProblem = (i: number): string => `resourceSpans[0].scopeSpans[0].spans[${i}].spanId: expected 8 bytes, got 3`

/** One span of `count` string attributes, as protobuf: four fields an attribute on the wire. */
export function otlpProtobufWithAttributes(traceId: string, count: number): Buffer {
  const [span] = traceSpans(traceId, 1) as [TestSpan]
  const attributes = Array.from({ length: count }, (_, i) => ({ key: `a${i}`, value: { stringValue: 'v' } }))
  const message = ExportRequest.fromObject({
    resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, traceId: Buffer.from(span.traceId, 'hex'), spanId: Buffer.from(span.spanId, 'hex'), attributes }] }] }],
  })
  return Buffer.from(ExportRequest.encode(message).finish())
}
