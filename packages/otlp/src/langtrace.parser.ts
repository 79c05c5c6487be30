// The Langtrace SDKs' own format: a JSON array of spans as the SDK holds them.
// Two producers, told apart per field rather than per body:
// - the TypeScript SDK's LangTraceExporter: the OTel JS ReadableSpan (`traceId`, `spanId`,
//   `parentSpanId`, HrTime `startTime`/`endTime`, JS span kinds, `resource._attributes`);
// - the Python SDK before 3.3: `span.to_json()` (`context.trace_id` as 0x-hex, `parent_id`,
//   `kind: "SpanKind.CLIENT"`, ISO `start_time`/`end_time`, `status.status_code`).
import { ErrorPath } from './error-path.ts'
import { SpanCollector } from './span-collector.ts'
import { idFromLangtrace, parentIdFromLangtrace } from './ids.ts'
import { attributesFromPlain } from './plain-value.ts'
import { langtraceKind, langtraceStatusCode } from './span-enums.ts'
import type { AttributeMap, SpanEventRecord, SpanLinkRecord, SpanRecord } from './span-record.ts'
import { buildSpanRecord, emptyToNull, spanOrigin } from './span-record.builder.ts'
import { nanosFromHrTime, nanosFromIso, nanosFromOtlpJson, spanTimes } from './times.ts'
import { isObject, optionalString, type JsonObject } from './json-object.ts'

/** `object[field]` when `object` is an object, else undefined. */
function member(object: unknown, field: string): unknown {
  return isObject(object) ? object[field] : undefined
}

const PYTHON_TRACE_STATE_ENTRY = /\{key=([^,{}]*), value=([^{}]*)\}/g

/**
 * A trace state in the W3C header form. Python writes `repr(TraceState)`, a list of
 * `{key=k, value=v}` strings (`[]` when empty); JS serialises its TraceState object, whose entries
 * are lost by then, so anything but a string is read as none.
 */
function traceStateFrom(value: unknown): string | null {
  if (typeof value !== 'string') return null
  if (value.startsWith('[') && value.endsWith(']')) {
    const entries: string[] = []
    for (const [, key, entryValue] of value.matchAll(PYTHON_TRACE_STATE_ENTRY)) entries.push(`${key}=${entryValue}`)
    return entries.length === 0 ? null : entries.join(',')
  }
  return emptyToNull(value)
}

/** A timestamp in whichever spelling this object uses: OTLP `…UnixNano`, JS HrTime, or Python ISO. */
function timeField(span: JsonObject, otlpField: string, hrField: string, isoField: string, path: ErrorPath): bigint {
  let field = otlpField
  let read = nanosFromOtlpJson
  if (span[otlpField] === undefined) {
    if (span[hrField] !== undefined) {
      field = hrField
      read = nanosFromHrTime
    } else if (span[isoField] !== undefined) {
      field = isoField
      read = nanosFromIso
    } else {
      path.failAt(hrField, 'required')
    }
  }
  return path.decodeField(field, span[field], read)
}

/** The id at the first of `candidates` (object path, field) that is present. */
function idFrom(
  span: JsonObject,
  candidates: ReadonlyArray<readonly [string | null, string]>,
  bytes: 16 | 8,
  path: ErrorPath,
): string {
  for (const [parent, field] of candidates) {
    const holder = parent === null ? span : member(span, parent)
    const value = member(holder, field)
    if (value === undefined) continue
    if (parent !== null) path.field(parent)
    path.field(field)
    const id = idFromLangtrace(value, bytes, path)
    path.pop()
    if (parent !== null) path.pop()
    return id
  }
  const [parent, field] = candidates[0] as readonly [string | null, string]
  if (parent !== null) path.field(parent)
  return path.failAt(field, 'required')
}

const TRACE_ID_FIELDS = [
  [null, 'traceId'],
  ['context', 'trace_id'],
  ['context', 'traceId'],
  ['spanContext', 'traceId'],
] as const
const SPAN_ID_FIELDS = [
  [null, 'spanId'],
  ['context', 'span_id'],
  ['context', 'spanId'],
  ['spanContext', 'spanId'],
] as const
const LINK_TRACE_ID_FIELDS = [
  ['context', 'traceId'],
  ['context', 'trace_id'],
  [null, 'traceId'],
] as const
const LINK_SPAN_ID_FIELDS = [
  ['context', 'spanId'],
  ['context', 'span_id'],
  [null, 'spanId'],
] as const

function parentIdFrom(span: JsonObject, path: ErrorPath): string | null {
  let field = 'parentSpanId'
  let value = span.parentSpanId
  if (value === undefined || value === null) {
    // OTel JS 2.x replaced parentSpanId with parentSpanContext.
    const context = span.parentSpanContext
    if (isObject(context) && context.spanId !== undefined) {
      path.field('parentSpanContext')
      path.field('spanId')
      const id = parentIdFromLangtrace(context.spanId, path)
      path.pop()
      path.pop()
      return id
    }
    field = 'parent_id'
    value = span.parent_id
  }
  return path.decodeField(field, value, parentIdFromLangtrace)
}

function attributesField(object: JsonObject, field: string, path: ErrorPath): AttributeMap {
  return path.decodeField(field, object[field], attributesFromPlain)
}

function eventsFrom(span: JsonObject, path: ErrorPath): SpanEventRecord[] {
  const events: SpanEventRecord[] = []
  const list = span.events
  if (list === undefined || list === null) return events
  path.field('events')
  if (!Array.isArray(list)) path.fail('expected an array')
  for (let i = 0; i < list.length; i++) {
    const event: unknown = list[i]
    path.index(i)
    if (!isObject(event)) path.fail('expected an event object')
    const time = timeField(event, 'timeUnixNano', 'time', 'timestamp', path)
    const name = event.name ?? ''
    if (typeof name !== 'string') path.failAt('name', 'expected a string')
    events.push({ timeUnixNano: time.toString(), name, attributes: attributesField(event, 'attributes', path) })
    path.pop()
  }
  path.pop()
  return events
}

function linksFrom(span: JsonObject, path: ErrorPath): SpanLinkRecord[] {
  const links: SpanLinkRecord[] = []
  const list = span.links
  if (list === undefined || list === null) return links
  path.field('links')
  if (!Array.isArray(list)) path.fail('expected an array')
  for (let i = 0; i < list.length; i++) {
    const link: unknown = list[i]
    path.index(i)
    if (!isObject(link)) path.fail('expected a link object')
    const context = link.context
    links.push({
      traceId: idFrom(link, LINK_TRACE_ID_FIELDS, 16, path),
      spanId: idFrom(link, LINK_SPAN_ID_FIELDS, 8, path),
      traceState: traceStateFrom(member(context, 'traceState') ?? member(context, 'trace_state') ?? link.traceState),
      attributes: attributesField(link, 'attributes', path),
    })
    path.pop()
  }
  path.pop()
  return links
}

function statusFrom(span: JsonObject, path: ErrorPath): { code: number; message: string | null } {
  const status = span.status
  if (status === undefined || status === null) return { code: 0, message: null }
  path.field('status')
  if (!isObject(status)) path.fail('expected an object')
  const codeField = status.code === undefined ? 'status_code' : 'code'
  path.field(codeField)
  const code = langtraceStatusCode(status[codeField], path)
  path.pop()
  const message = optionalString(status, status.message === undefined ? 'description' : 'message', path)
  path.pop()
  return { code, message }
}

/** Resource attributes: `{attributes}`, or the JS SDK's serialised Resource (`_attributes`, `_syncAttributes`). */
function resourceAttributesFrom(span: JsonObject, path: ErrorPath): AttributeMap {
  const resource = span.resource
  if (resource === undefined || resource === null) return {}
  path.field('resource')
  if (!isObject(resource)) path.fail('expected an object')
  const field =
    resource.attributes !== undefined ? 'attributes' : resource._attributes !== undefined ? '_attributes' : '_syncAttributes'
  const attributes = attributesField(resource, field, path)
  path.pop()
  return attributes
}

function scopeFrom(span: JsonObject, path: ErrorPath): { name: string | null; version: string | null } {
  const field = span.instrumentationScope !== undefined ? 'instrumentationScope' : 'instrumentationLibrary'
  const scope = span[field]
  if (scope === undefined || scope === null) return { name: null, version: null }
  path.field(field)
  if (!isObject(scope)) path.fail('expected an object')
  const name = optionalString(scope, 'name', path)
  const version = optionalString(scope, 'version', path)
  path.pop()
  return { name, version }
}

function spanFrom(value: unknown, path: ErrorPath): SpanRecord {
  if (!isObject(value)) return path.fail('expected a span object')
  const span = value
  const traceId = idFrom(span, TRACE_ID_FIELDS, 16, path)
  const spanId = idFrom(span, SPAN_ID_FIELDS, 8, path)
  const parentSpanId = parentIdFrom(span, path)
  const name = span.name
  if (typeof name !== 'string') path.failAt('name', name === undefined ? 'required' : 'expected a string')
  path.field('kind')
  const kind = langtraceKind(span.kind, path)
  path.pop()
  const start = timeField(span, 'startTimeUnixNano', 'startTime', 'start_time', path)
  const end = timeField(span, 'endTimeUnixNano', 'endTime', 'end_time', path)
  if (end < start) {
    const endField = span.endTimeUnixNano !== undefined ? 'endTimeUnixNano' : span.endTime !== undefined ? 'endTime' : 'end_time'
    path.failAt(endField, 'must not be before the start time')
  }
  const status = statusFrom(span, path)
  const scope = scopeFrom(span, path)
  const origin = spanOrigin(resourceAttributesFrom(span, path), scope.name, scope.version)
  return buildSpanRecord(origin, {
    traceId,
    spanId,
    parentSpanId,
    name,
    kind,
    times: spanTimes(start, end),
    traceState: traceStateFrom(member(span.context, 'trace_state') ?? member(span.context, 'traceState') ?? span.traceState),
    statusCode: status.code,
    statusMessage: status.message,
    attributes: attributesField(span, 'attributes', path),
    events: eventsFrom(span, path),
    links: linksFrom(span, path),
  })
}

/** Every span of a Langtrace SDK array body, validated and rejected one by one; errors are located as `[3].spanId`. */
export function spansFromLangtrace(body: unknown[]): SpanCollector {
  const path: ErrorPath = new ErrorPath()
  const spans = new SpanCollector()
  for (let i = 0; i < body.length; i++) {
    path.index(i)
    spans.collect(path, () => spanFrom(body[i], path))
    path.pop()
  }
  return spans.result()
}
