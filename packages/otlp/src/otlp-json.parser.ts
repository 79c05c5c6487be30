import { attributesFromJson } from './any-value.ts'
import { ErrorPath } from './error-path.ts'
import { idFromOtlpJson, parentIdFromOtlpJson } from './ids.ts'
import { otlpKind, otlpStatusCode } from './span-enums.ts'
import type { AttributeMap, SpanEventRecord, SpanLinkRecord, SpanRecord } from './span-record.ts'
import { buildSpanRecord, spanOrigin } from './span-record.builder.ts'
import type { SpanOrigin } from './span-record.builder.ts'
import { isBefore, spanTimesFromJson, timeFromOtlpJson, type JsonTime } from './times.ts'
import { isObject, optionalString, type JsonObject } from './json-object.ts'
import { SpanCollector } from './span-collector.ts'

// OTLP/HTTP JSON (an ExportTraceServiceRequest in the protobuf JSON mapping).
// Fields this service does not keep (droppedAttributesCount, flags, schemaUrl, …) are ignored.

/** Enters `field` and checks it holds an array; null (not entered) when absent or null. */
function enterArray(object: JsonObject, field: string, path: ErrorPath): unknown[] | null {
  const value = object[field]
  if (value === undefined || value === null) return null
  path.field(field)
  if (!Array.isArray(value)) path.fail('expected an array')
  return value
}

function attributesField(object: JsonObject, path: ErrorPath): AttributeMap {
  path.field('attributes')
  const attributes = attributesFromJson(object.attributes, path)
  path.pop()
  return attributes
}

function idField(object: JsonObject, field: string, bytes: 16 | 8, path: ErrorPath): string {
  return path.decodeField(field, object[field], (value, at) => idFromOtlpJson(value, bytes, at))
}

function timeField(object: JsonObject, field: string, path: ErrorPath): JsonTime {
  return path.decodeField(field, object[field], timeFromOtlpJson)
}

function eventsFromJson(span: JsonObject, path: ErrorPath): SpanEventRecord[] {
  const events: SpanEventRecord[] = []
  const list = enterArray(span, 'events', path)
  if (list === null) return events
  for (let i = 0; i < list.length; i++) {
    const event: unknown = list[i]
    path.index(i)
    if (!isObject(event)) path.fail('expected an event object')
    const time = timeField(event, 'timeUnixNano', path)
    const name = event.name ?? ''
    if (typeof name !== 'string') path.failAt('name', 'expected a string')
    events.push({ timeUnixNano: time.decimal, name, attributes: attributesField(event, path) })
    path.pop()
  }
  path.pop()
  return events
}

function linksFromJson(span: JsonObject, path: ErrorPath): SpanLinkRecord[] {
  const links: SpanLinkRecord[] = []
  const list = enterArray(span, 'links', path)
  if (list === null) return links
  for (let i = 0; i < list.length; i++) {
    const link: unknown = list[i]
    path.index(i)
    if (!isObject(link)) path.fail('expected a link object')
    links.push({
      traceId: idField(link, 'traceId', 16, path),
      spanId: idField(link, 'spanId', 8, path),
      traceState: optionalString(link, 'traceState', path),
      attributes: attributesField(link, path),
    })
    path.pop()
  }
  path.pop()
  return links
}

function spanFromJson(value: unknown, origin: SpanOrigin, path: ErrorPath): SpanRecord {
  if (!isObject(value)) return path.fail('expected a span object')
  const span = value
  const traceId = idField(span, 'traceId', 16, path)
  const spanId = idField(span, 'spanId', 8, path)
  path.field('parentSpanId')
  const parentSpanId = parentIdFromOtlpJson(span.parentSpanId, path)
  path.pop()
  const name = span.name
  if (typeof name !== 'string') path.failAt('name', name === undefined ? 'required' : 'expected a string')
  path.field('kind')
  const kind = otlpKind(span.kind, path)
  path.pop()
  const start = timeField(span, 'startTimeUnixNano', path)
  const end = timeField(span, 'endTimeUnixNano', path)
  if (isBefore(end, start)) path.failAt('endTimeUnixNano', 'must not be before startTimeUnixNano')

  let statusCode = 0
  let statusMessage: string | null = null
  const status = span.status
  if (status !== undefined && status !== null) {
    path.field('status')
    if (!isObject(status)) path.fail('expected an object')
    path.field('code')
    statusCode = otlpStatusCode(status.code, path)
    path.pop()
    statusMessage = optionalString(status, 'message', path)
    path.pop()
  }

  return buildSpanRecord(origin, {
    traceId,
    spanId,
    parentSpanId,
    name,
    kind,
    times: spanTimesFromJson(start, end),
    traceState: optionalString(span, 'traceState', path),
    statusCode,
    statusMessage,
    attributes: attributesField(span, path),
    events: eventsFromJson(span, path),
    links: linksFromJson(span, path),
  })
}

/**
 * Reads one `scopeSpans` list (or the pre-1.0 `instrumentationLibrarySpans` with
 * `instrumentationLibrary`) into `out`; returns how many entries the list had.
 */
function readScopeSpans(
  resourceSpans: JsonObject,
  listField: string,
  scopeField: string,
  resourceAttributes: AttributeMap,
  path: ErrorPath,
  out: SpanCollector,
): number {
  const list = enterArray(resourceSpans, listField, path)
  if (list === null) return 0
  for (let s = 0; s < list.length; s++) {
    const scopeSpans: unknown = list[s]
    path.index(s)
    if (!isObject(scopeSpans)) path.fail('expected an object')
    let scopeName: string | null = null
    let scopeVersion: string | null = null
    const scope = scopeSpans[scopeField]
    if (scope !== undefined && scope !== null) {
      path.field(scopeField)
      if (!isObject(scope)) path.fail('expected an object')
      scopeName = optionalString(scope, 'name', path)
      scopeVersion = optionalString(scope, 'version', path)
      path.pop()
    }
    const origin = spanOrigin(resourceAttributes, scopeName, scopeVersion)
    const spans = enterArray(scopeSpans, 'spans', path)
    if (spans !== null) {
      for (let i = 0; i < spans.length; i++) {
        path.index(i)
        out.collect(path, () => spanFromJson(spans[i], origin, path))
        path.pop()
      }
      path.pop()
    }
    path.pop()
  }
  path.pop()
  return list.length
}

/**
 * Every span of an OTLP JSON body, validated: invalid spans are rejected one by one (SpanCollector);
 * a body whose structure is not a trace batch throws SpanValidationError.
 */
export function spansFromOtlpJson(body: JsonObject): SpanCollector {
  const path: ErrorPath = new ErrorPath()
  const spans = new SpanCollector()
  const resourceSpansList = body.resourceSpans
  path.field('resourceSpans')
  if (!Array.isArray(resourceSpansList)) path.fail('expected an array of ResourceSpans')
  for (let r = 0; r < resourceSpansList.length; r++) {
    const resourceSpans: unknown = resourceSpansList[r]
    path.index(r)
    if (!isObject(resourceSpans)) path.fail('expected an object')
    let resourceAttributes: AttributeMap = {}
    const resource = resourceSpans.resource
    if (resource !== undefined && resource !== null) {
      path.field('resource')
      if (!isObject(resource)) path.fail('expected an object')
      resourceAttributes = attributesField(resource, path)
      path.pop()
    }
    // OTLP 0.15–0.19 senders may double-publish under the old name: it only counts when
    // scopeSpans is absent or empty (opentelemetry-proto's rule for that grace period).
    if (readScopeSpans(resourceSpans, 'scopeSpans', 'scope', resourceAttributes, path, spans) === 0) {
      readScopeSpans(resourceSpans, 'instrumentationLibrarySpans', 'instrumentationLibrary', resourceAttributes, path, spans)
    }
    path.pop()
  }
  return spans.result()
}
