// OTLP/HTTP protobuf: what every OTel HTTP exporter and the Langtrace Python
// SDK >= 3.3 send.
//
// Why protobufjs with a reflection schema (otlp-trace.schema.ts): it is the most used, maintained
// protobuf runtime for JavaScript, and from a reflection Type it generates a specialised decoder
// function once, at first use — the same code its static generator would emit, without a build
// step or generated files to keep in sync. @opentelemetry/otlp-transformer has no request decoder
// (it only serialises what an SDK exports), and @bufbuild/protobuf would need protoc-generated code
// checked in. int64/fixed64 arrive as long.js Longs (protobufjs' own dependency), so nanosecond
// times and int64 attributes keep every digit.
import protobuf from 'protobufjs'
import { MAX_ANY_VALUE_DEPTH, setAttribute } from './attribute-map.ts'
import { bytesToBase64 } from './base64.ts'
import { recordDroppedAttributes, spanLimits } from './span-limits.ts'
import { ErrorPath } from './error-path.ts'
import { SpanCollector } from './span-collector.ts'
import { idFromBytes, parentIdFromBytes } from './ids.ts'
import { signedLongToDecimal } from './int64.ts'
import type { LongLike } from './int64.ts'
import { ExportTraceServiceRequest } from './otlp-trace.schema.ts'
import { checkKind, checkStatusCode } from './span-enums.ts'
import type { AnyValue, AttributeMap, SpanEventRecord, SpanLinkRecord, SpanRecord } from './span-record.ts'
import { buildSpanRecord, emptyToNull, spanOrigin } from './span-record.builder.ts'
import type { SpanOrigin } from './span-record.builder.ts'
import { nanosFromFixed64, spanTimes } from './times.ts'
import { storableString } from './string-value-limit.ts'
import { SpanValidationError } from './validation-error.ts'

// The decoded messages as protobufjs builds them: unset scalars read as their defaults ('' / 0 /
// empty bytes) from the prototype, unset messages as null, unset repeated fields as empty arrays.
interface PbKeyValue {
  key: string
  value: PbAnyValue | null
}

/** Only the members read from the wire are own properties (the schema gives them presence). */
interface PbAnyValue {
  stringValue: string
  boolValue: boolean
  intValue: LongLike | number
  doubleValue: number
  arrayValue: { values: PbAnyValue[] }
  kvlistValue: { values: PbKeyValue[] }
  bytesValue: Uint8Array
}

interface PbEvent {
  timeUnixNano: LongLike | number
  name: string
  attributes: PbKeyValue[]
}

interface PbLink {
  traceId: Uint8Array
  spanId: Uint8Array
  traceState: string
  attributes: PbKeyValue[]
}

interface PbSpan {
  traceId: Uint8Array
  spanId: Uint8Array
  traceState: string
  parentSpanId: Uint8Array
  name: string
  kind: number
  startTimeUnixNano: LongLike | number
  endTimeUnixNano: LongLike | number
  attributes: PbKeyValue[]
  events: PbEvent[]
  links: PbLink[]
  status: { message: string; code: number } | null
}

interface PbScopeSpans {
  scope: { name: string; version: string } | null
  spans: PbSpan[]
}

interface PbRequest {
  resourceSpans: Array<{
    resource: { attributes: PbKeyValue[] } | null
    scopeSpans: PbScopeSpans[]
    instrumentationLibrarySpans: PbScopeSpans[]
  }>
}

function decodeRequest(body: Uint8Array): PbRequest {
  // A Buffer view (no copy) makes protobufjs use its Buffer reader: native UTF-8 decoding, and
  // bytes fields become views instead of copies.
  const buffer = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const reader = protobuf.Reader.create(buffer)
  // Fields this service does not read (dropped counts, flags, schema URLs…) are skipped, not kept.
  reader.discardUnknown = true
  try {
    return ExportTraceServiceRequest.decode(reader) as unknown as PbRequest
  } catch (error) {
    // Truncated input, bad wire types or lengths, nesting past protobufjs' recursion limit (100).
    const reason = error instanceof Error ? error.message : String(error)
    throw new SpanValidationError('body', `malformed protobuf ExportTraceServiceRequest (${reason})`)
  }
}

const hasOwn = Object.hasOwn

/** Which AnyValue member is set. A conformant sender sets at most one; if several came, the first here wins. */
function anyValueMember(value: PbAnyValue): keyof PbAnyValue | undefined {
  if (hasOwn(value, 'stringValue')) return 'stringValue'
  if (hasOwn(value, 'intValue')) return 'intValue'
  if (hasOwn(value, 'doubleValue')) return 'doubleValue'
  if (hasOwn(value, 'boolValue')) return 'boolValue'
  if (hasOwn(value, 'arrayValue')) return 'arrayValue'
  if (hasOwn(value, 'kvlistValue')) return 'kvlistValue'
  if (hasOwn(value, 'bytesValue')) return 'bytesValue'
  return undefined
}

function anyValueFromPb(value: PbAnyValue, path: ErrorPath, depth: number): AnyValue {
  switch (anyValueMember(value)) {
    case 'stringValue':
      return { stringValue: storableString(value.stringValue, spanLimits.attributeValueLength) }
    case 'intValue':
      return { intValue: signedLongToDecimal(value.intValue) }
    case 'doubleValue': {
      const double = value.doubleValue
      // Same spelling as the protobuf JSON mapping, which is what JSON can carry.
      if (Number.isFinite(double)) return { doubleValue: double }
      return { doubleValue: Number.isNaN(double) ? 'NaN' : double > 0 ? 'Infinity' : '-Infinity' }
    }
    case 'boolValue':
      return { boolValue: value.boolValue }
    case 'bytesValue':
      return { bytesValue: bytesToBase64(value.bytesValue) }
    case 'arrayValue': {
      path.field('arrayValue')
      if (depth >= MAX_ANY_VALUE_DEPTH) path.fail(`nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`)
      path.field('values')
      const list = value.arrayValue.values
      const values: AnyValue[] = []
      for (let i = 0; i < list.length; i++) {
        path.index(i)
        values.push(anyValueFromPb(list[i] as PbAnyValue, path, depth + 1))
        path.pop()
      }
      path.pop()
      path.pop()
      return { arrayValue: { values } }
    }
    case 'kvlistValue': {
      path.field('kvlistValue')
      if (depth >= MAX_ANY_VALUE_DEPTH) path.fail(`nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`)
      path.field('values')
      const list = value.kvlistValue.values
      const values: Array<{ key: string; value: AnyValue }> = []
      for (let i = 0; i < list.length; i++) {
        const entry = list[i] as PbKeyValue
        path.key(entry.key)
        values.push({ key: entry.key, value: entry.value === null ? {} : anyValueFromPb(entry.value, path, depth + 1) })
        path.pop()
      }
      path.pop()
      path.pop()
      return { kvlistValue: { values } }
    }
    default:
      return {}
  }
}

/** The `attributes` of the current position, in the map form. */
function attributesFromPb(list: PbKeyValue[], path: ErrorPath): AttributeMap {
  const out: AttributeMap = {}
  if (list.length === 0) return out
  path.field('attributes')
  // Only the first spanLimits.attributeCount are read; the rest are counted (span-limits.ts).
  const kept = Math.min(list.length, spanLimits.attributeCount)
  for (let i = 0; i < kept; i++) {
    const entry = list[i] as PbKeyValue
    path.key(entry.key)
    setAttribute(out, entry.key, entry.value === null ? {} : anyValueFromPb(entry.value, path, 0))
    path.pop()
  }
  path.pop()
  recordDroppedAttributes(out, list.length - kept)
  return out
}

function idField(bytes: Uint8Array, field: string, size: 16 | 8, path: ErrorPath): string {
  return path.decodeField(field, bytes, (value, at) => idFromBytes(value, size, at))
}

function nanosField(value: LongLike | number, field: string, path: ErrorPath): bigint {
  return path.decodeField(field, value, nanosFromFixed64)
}

function eventsFromPb(list: PbEvent[], path: ErrorPath): SpanEventRecord[] {
  const events: SpanEventRecord[] = []
  if (list.length === 0) return events
  path.field('events')
  for (let i = 0; i < list.length; i++) {
    const event = list[i] as PbEvent
    path.index(i)
    const time = nanosField(event.timeUnixNano, 'timeUnixNano', path)
    events.push({ timeUnixNano: time.toString(), name: event.name, attributes: attributesFromPb(event.attributes, path) })
    path.pop()
  }
  path.pop()
  return events
}

function linksFromPb(list: PbLink[], path: ErrorPath): SpanLinkRecord[] {
  const links: SpanLinkRecord[] = []
  if (list.length === 0) return links
  path.field('links')
  for (let i = 0; i < list.length; i++) {
    const link = list[i] as PbLink
    path.index(i)
    links.push({
      traceId: idField(link.traceId, 'traceId', 16, path),
      spanId: idField(link.spanId, 'spanId', 8, path),
      traceState: emptyToNull(link.traceState),
      attributes: attributesFromPb(link.attributes, path),
    })
    path.pop()
  }
  path.pop()
  return links
}

function spanFromPb(span: PbSpan, origin: SpanOrigin, path: ErrorPath): SpanRecord {
  const traceId = idField(span.traceId, 'traceId', 16, path)
  const spanId = idField(span.spanId, 'spanId', 8, path)
  path.field('parentSpanId')
  const parentSpanId = parentIdFromBytes(span.parentSpanId, path)
  path.pop()
  path.field('kind')
  const kind = checkKind(span.kind, path)
  path.pop()
  const start = nanosField(span.startTimeUnixNano, 'startTimeUnixNano', path)
  const end = nanosField(span.endTimeUnixNano, 'endTimeUnixNano', path)
  if (end < start) path.failAt('endTimeUnixNano', 'must not be before startTimeUnixNano')
  let statusCode = 0
  let statusMessage: string | null = null
  if (span.status !== null) {
    path.field('status')
    path.field('code')
    statusCode = checkStatusCode(span.status.code, path)
    path.pop()
    path.pop()
    statusMessage = emptyToNull(span.status.message)
  }
  return buildSpanRecord(origin, {
    traceId,
    spanId,
    parentSpanId,
    name: span.name,
    kind,
    times: spanTimes(start, end),
    traceState: emptyToNull(span.traceState),
    statusCode,
    statusMessage,
    attributes: attributesFromPb(span.attributes, path),
    events: eventsFromPb(span.events, path),
    links: linksFromPb(span.links, path),
  })
}

function readScopeSpans(
  list: PbScopeSpans[],
  field: string,
  resourceAttributes: AttributeMap,
  path: ErrorPath,
  out: SpanCollector,
): number {
  path.field(field)
  for (let s = 0; s < list.length; s++) {
    const scopeSpans = list[s] as PbScopeSpans
    path.index(s)
    const scope = scopeSpans.scope
    const origin = spanOrigin(
      resourceAttributes,
      scope === null ? null : emptyToNull(scope.name),
      scope === null ? null : emptyToNull(scope.version),
    )
    path.field('spans')
    const spans = scopeSpans.spans
    for (let i = 0; i < spans.length; i++) {
      path.index(i)
      out.collect(path, () => spanFromPb(spans[i] as PbSpan, origin, path))
      path.pop()
    }
    path.pop()
    path.pop()
  }
  path.pop()
  return list.length
}

/** Every span of an ExportTraceServiceRequest, validated (and rejected one by one) exactly like OTLP JSON. */
export function spansFromOtlpProtobuf(body: Uint8Array): SpanCollector {
  const request = decodeRequest(body)
  const path: ErrorPath = new ErrorPath()
  const spans = new SpanCollector()
  path.field('resourceSpans')
  const resourceSpansList = request.resourceSpans
  for (let r = 0; r < resourceSpansList.length; r++) {
    const resourceSpans = resourceSpansList[r] as PbRequest['resourceSpans'][number]
    path.index(r)
    let resourceAttributes: AttributeMap = {}
    if (resourceSpans.resource !== null) {
      path.field('resource')
      resourceAttributes = attributesFromPb(resourceSpans.resource.attributes, path)
      path.pop()
    }
    // The deprecated field only counts when scope_spans is empty (opentelemetry-proto's rule).
    if (readScopeSpans(resourceSpans.scopeSpans, 'scopeSpans', resourceAttributes, path, spans) === 0) {
      readScopeSpans(resourceSpans.instrumentationLibrarySpans, 'instrumentationLibrarySpans', resourceAttributes, path, spans)
    }
    path.pop()
  }
  return spans.result()
}
