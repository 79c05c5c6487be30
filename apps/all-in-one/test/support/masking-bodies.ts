import { deflateSync, gzipSync } from 'node:zlib'
import protobuf from 'protobufjs'

// One span full of personal data and secrets, written in every body form ingest accepts: where a
// value can hide (name, status message, attributes, arrays, JSON in a string, events, links, the
// resource), each holds one.

export const secrets = {
  email: 'mallory.secret@example.org',
  card: '4111 1111 1111 1111',
  apiKey: 'sk-proj-MaskMe0123456789abcdefghij',
  phone: '+44 20 7946 0958',
  customer: 'CUST-90210',
}
/** What must appear nowhere once the rules below applied: a piece of each secret. */
export const leaks = ['mallory', '4111', 'MaskMe', '7946', 'CUST-90210']

export const maskingRules = [
  { detector: 'email' },
  { detector: 'credit_card' },
  { detector: 'secret' },
  { detector: 'phone' },
  { detector: 'regex', pattern: 'CUST-[0-9]{5}', replacement: '[customer]' },
]

export const promptsJson = JSON.stringify([{ role: 'user', content: `my card is ${secrets.card}, call me on ${secrets.phone}` }])

export interface SpanIds {
  traceId: string
  spanId: string
  linkedSpanId: string
}

const startNanos = () => BigInt(Date.now()) * 1_000_000n

/** The span's attributes as plain values (Langtrace) and the typed values of OTLP. */
const plainAttributes = () => ({
  'user.id': secrets.email,
  'llm.prompts': promptsJson,
  'gen_ai.request.model': 'gpt-4o',
  'api.keys': [secrets.apiKey, 'not a key'],
})

const otlpAttributes = (attributes: Record<string, string | string[]>) =>
  Object.entries(attributes).map(([key, value]) => ({
    key,
    value: Array.isArray(value) ? { arrayValue: { values: value.map((item) => ({ stringValue: item })) } } : { stringValue: value },
  }))

function otlpRequest(ids: SpanIds) {
  const start = startNanos()
  return {
    resourceSpans: [
      {
        resource: { attributes: otlpAttributes({ 'service.name': 'masking-e2e', 'host.owner': secrets.email }) },
        scopeSpans: [
          {
            scope: { name: 'masking-test', version: '1.0' },
            spans: [
              {
                traceId: ids.traceId,
                spanId: ids.spanId,
                name: `ask ${secrets.email}`,
                kind: 3,
                startTimeUnixNano: String(start),
                endTimeUnixNano: String(start + 1_000_000n),
                attributes: otlpAttributes(plainAttributes()),
                events: [{ timeUnixNano: String(start + 500_000n), name: 'sent', attributes: otlpAttributes({ to: secrets.email }) }],
                links: [{ traceId: ids.traceId, spanId: ids.linkedSpanId, attributes: otlpAttributes({ from: secrets.customer }) }],
                status: { code: 2, message: `failed for ${secrets.customer}` },
              },
            ],
          },
        ],
      },
    ],
  }
}

export const otlpJsonBody = (ids: SpanIds): Buffer => Buffer.from(JSON.stringify(otlpRequest(ids)))

// The fields of opentelemetry-proto's trace messages these bodies use, with their numbers.
const ExportRequest = protobuf.parse(`
  syntax = "proto3";
  message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
  message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
  message Resource { repeated KeyValue attributes = 1; }
  message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
  message InstrumentationScope { string name = 1; string version = 2; }
  message Span {
    bytes trace_id = 1; bytes span_id = 2; string name = 5; int32 kind = 6;
    fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
    repeated Event events = 11; repeated Link links = 13; Status status = 15;
  }
  message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
  message Link { bytes trace_id = 1; bytes span_id = 2; repeated KeyValue attributes = 4; }
  message Status { string message = 2; int32 code = 3; }
  message KeyValue { string key = 1; AnyValue value = 2; }
  message AnyValue { string string_value = 1; ArrayValue array_value = 5; }
  message ArrayValue { repeated AnyValue values = 1; }
`).root.lookupType('ExportTraceServiceRequest')

export function otlpProtobufBody(ids: SpanIds): Buffer {
  const hex = (text: string) => Buffer.from(text, 'hex')
  const json = otlpRequest(ids)
  const resource = json.resourceSpans[0]!
  const scope = resource.scopeSpans[0]!
  const span = scope.spans[0]!
  const message = {
    resourceSpans: [
      {
        resource: resource.resource,
        scopeSpans: [
          {
            scope: scope.scope,
            spans: [
              {
                ...span,
                traceId: hex(span.traceId),
                spanId: hex(span.spanId),
                events: span.events.map((event) => ({ ...event, timeUnixNano: BigInt(event.timeUnixNano) })),
                links: span.links.map((link) => ({ ...link, traceId: hex(link.traceId), spanId: hex(link.spanId) })),
                startTimeUnixNano: BigInt(span.startTimeUnixNano),
                endTimeUnixNano: BigInt(span.endTimeUnixNano),
              },
            ],
          },
        ],
      },
    ],
  }
  return Buffer.from(ExportRequest.encode(ExportRequest.fromObject(message)).finish())
}

/** The Langtrace TypeScript SDK's array of ReadableSpans. */
export function langtraceBody(ids: SpanIds): Buffer {
  const now = Date.now()
  const hrTime = (ms: number) => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000]
  return Buffer.from(
    JSON.stringify([
      {
        traceId: ids.traceId,
        spanId: ids.spanId,
        name: `ask ${secrets.email}`,
        kind: 2,
        startTime: hrTime(now),
        endTime: hrTime(now + 1),
        attributes: plainAttributes(),
        status: { code: 2, message: `failed for ${secrets.customer}` },
        events: [{ name: 'sent', time: hrTime(now), attributes: { to: secrets.email } }],
        links: [{ context: { traceId: ids.traceId, spanId: ids.linkedSpanId }, attributes: { from: secrets.customer } }],
        resource: { attributes: { 'service.name': 'masking-e2e', 'host.owner': secrets.email } },
        instrumentationLibrary: { name: 'masking-test', version: '1.0' },
      },
    ]),
  )
}

export interface BodyForm {
  name: string
  url: string
  contentType: string
  encoding?: 'gzip' | 'deflate'
  body(ids: SpanIds): Buffer
}

/** Every body form: each format, plain and compressed. */
export const bodyForms: BodyForm[] = [
  { name: 'OTLP JSON', url: '/v1/traces', contentType: 'application/json', body: otlpJsonBody },
  { name: 'OTLP protobuf', url: '/v1/traces', contentType: 'application/x-protobuf', body: otlpProtobufBody },
  { name: 'Langtrace JSON', url: '/api/trace', contentType: 'application/json', body: langtraceBody },
  { name: 'gzip OTLP JSON', url: '/v1/traces', contentType: 'application/json', encoding: 'gzip', body: (ids) => gzipSync(otlpJsonBody(ids)) },
  { name: 'deflate OTLP protobuf', url: '/v1/traces', contentType: 'application/x-protobuf', encoding: 'deflate', body: (ids) => deflateSync(otlpProtobufBody(ids)) },
  { name: 'gzip Langtrace JSON', url: '/api/trace', contentType: 'application/json', encoding: 'gzip', body: (ids) => gzipSync(langtraceBody(ids)) },
]
