import { callerSpanCost, deriveLlmUsage, type LlmFields, type SpanCost } from '@tracewell/llm-usage'
import { serviceFields } from './derived-fields.ts'
import { limitSpan } from './span-limits.ts'
import type { AttributeMap, SpanEventRecord, SpanLinkRecord, SpanRecord } from './span-record.ts'
import type { SpanTimes } from './times.ts'
import { keyField } from './key-field-limit.ts'

/**
 * What every span of one resource and scope shares. Built once per resource/scope, so the
 * resource attributes object is shared by its spans rather than copied.
 */
export interface SpanOrigin {
  resourceAttributes: AttributeMap
  serviceName: string | null
  serviceVersion: string | null
  scopeName: string | null
  scopeVersion: string | null
}

export function spanOrigin(resourceAttributes: AttributeMap, scopeName: string | null, scopeVersion: string | null): SpanOrigin {
  const { serviceName, serviceVersion } = serviceFields(resourceAttributes)
  return { resourceAttributes, serviceName, serviceVersion, scopeName, scopeVersion }
}

/** An empty string is how protobuf says "not set"; JSON decodes the same way so both agree. */
export function emptyToNull(value: string): string | null {
  return value === '' ? null : value
}

/** A span's own fields, validated. */
export interface SpanFields {
  traceId: string
  spanId: string
  parentSpanId: string | null
  name: string
  kind: number
  times: SpanTimes
  traceState: string | null
  statusCode: number
  statusMessage: string | null
  attributes: AttributeMap
  events: SpanEventRecord[]
  links: SpanLinkRecord[]
}

/**
 * The one place SpanRecords are created, so every decoder yields the same object shape and the
 * same derived fields.
 */
export function buildSpanRecord(origin: SpanOrigin, span: SpanFields): SpanRecord {
  const { times } = span
  const { fields, cost } = derivedFields(span.attributes, origin.scopeName)
  const { attributes, events, links } = limitSpan(span.attributes, span.events, span.links)
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: times.startTimeUnixNano,
    endTimeUnixNano: times.endTimeUnixNano,
    traceState: span.traceState,
    statusCode: span.statusCode,
    statusMessage: span.statusMessage,
    attributes,
    resourceAttributes: origin.resourceAttributes,
    scopeName: origin.scopeName,
    scopeVersion: origin.scopeVersion,
    events,
    links,
    serviceName: keyField(origin.serviceName),
    serviceVersion: origin.serviceVersion,
    // Every derived field as @tracewell/llm-usage derives it: a field added there is stored
    // with no change here (docs/architecture.md#span-columns); those that are index keys bounded.
    ...fields,
    llmModel: keyField(fields.llmModel),
    llmResponseModel: keyField(fields.llmResponseModel),
    llmVendor: keyField(fields.llmVendor),
    sessionId: keyField(fields.sessionId),
    userId: keyField(fields.userId),
    ...cost,
    durationNs: times.durationNs,
  }
}

/**
 * What @tracewell/llm-usage derives from a span's attributes, with the caller's own cost: the only
 * cost known here; the writer prices the rest when it stores the span (it has the project's own prices).
 */
function derivedFields(attributes: AttributeMap, scopeName: string | null): { fields: LlmFields; cost: SpanCost } {
  const { fields, callerCost } = deriveLlmUsage(attributes, scopeName)
  return { fields, cost: callerSpanCost(callerCost) }
}
