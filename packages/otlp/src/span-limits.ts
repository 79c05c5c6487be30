import { setAttribute } from './attribute-map.ts'
import { MAX_STRING_VALUE_LENGTH } from './string-value-limit.ts'
import type { AttributeMap, SpanEventRecord, SpanLinkRecord } from './span-record.ts'

// Per-span limits, as OpenTelemetry defines them for its SDKs (the span limits of the trace SDK
// specification, with their defaults): beyond them a span keeps the first attributes, events and
// links it was given and counts the rest as dropped. Attributes past the limit are not even
// converted (the converters stop at ATTRIBUTE_COUNT_LIMIT and only count the rest), so the LLM
// columns derive from the kept ones, as an OpenTelemetry SDK would have sent them. One request can then no longer hand the
// writer, the database and every later read of the span a million attributes (what such a span
// cost to read back: docs/benchmarks.md#figures-behind-code-comments-2026-12-06). The resource's attributes are held to the same
// count, since every span of the resource stores them.
//
// What was dropped is recorded on the span as OpenTelemetry records it where a format has no field
// for it (the specification's mapping to non-OTLP formats, as its Zipkin exporter does):
// attributes `otel.dropped_attributes_count`, `otel.dropped_events_count` and
// `otel.dropped_links_count`, the first also on an event, a link or the resource that lost some.
//
// The limits are settings (SPAN_ATTRIBUTE_COUNT_LIMIT, SPAN_EVENT_COUNT_LIMIT, SPAN_LINK_COUNT_LIMIT,
// ATTRIBUTE_VALUE_LENGTH_LIMIT), with OpenTelemetry's defaults; each service applies them once at
// start (configureSpanLimits), ingest's decode workers too. Ingest's apply to what it queues; the
// writer's to the request bodies an older ingest queued, which it decodes itself: give both the same.

/**
 * OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT's default, which is also OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT's and
 * OTEL_LINK_ATTRIBUTE_COUNT_LIMIT's; held to a resource's attributes too.
 */
export const ATTRIBUTE_COUNT_LIMIT = 128
/** OTEL_SPAN_EVENT_COUNT_LIMIT's default. */
export const SPAN_EVENT_COUNT_LIMIT = 128
/** OTEL_SPAN_LINK_COUNT_LIMIT's default. */
export const SPAN_LINK_COUNT_LIMIT = 128

export interface SpanLimits {
  /** Attributes kept per span, event, link and resource. */
  attributeCount: number
  eventCount: number
  linkCount: number
  /** UTF-16 code units kept of a string attribute value (string-value-limit.ts). */
  attributeValueLength: number
}

export const DEFAULT_SPAN_LIMITS: SpanLimits = {
  attributeCount: ATTRIBUTE_COUNT_LIMIT,
  eventCount: SPAN_EVENT_COUNT_LIMIT,
  linkCount: SPAN_LINK_COUNT_LIMIT,
  attributeValueLength: MAX_STRING_VALUE_LENGTH,
}

/**
 * The limits in force in this thread. Module state rather than a parameter of every converter:
 * they are read in the innermost loops of four body formats, and a process has one set of them.
 */
export const spanLimits: SpanLimits = { ...DEFAULT_SPAN_LIMITS }

/** Applies the service's limits (its settings) to every body this thread decodes from now on. */
export function configureSpanLimits(limits: SpanLimits): void {
  Object.assign(spanLimits, limits)
}

export const DROPPED_ATTRIBUTES_COUNT = 'otel.dropped_attributes_count'
export const DROPPED_EVENTS_COUNT = 'otel.dropped_events_count'
export const DROPPED_LINKS_COUNT = 'otel.dropped_links_count'

const countValue = (count: number) => ({ intValue: String(count) })

/**
 * Records on a converted attribute map that `dropped` attributes were past the limit. The
 * converters (OTLP JSON, protobuf, Langtrace) convert only the first spanLimits.attributeCount
 * attributes of a map, so that one with a million costs little more than counting them.
 */
export function recordDroppedAttributes(attributes: AttributeMap, dropped: number): void {
  if (dropped > 0) setAttribute(attributes, DROPPED_ATTRIBUTES_COUNT, countValue(dropped))
}

/** A span's events and links within their limits, with how many were dropped recorded on the span. */
export function limitSpan(attributes: AttributeMap, events: SpanEventRecord[], links: SpanLinkRecord[]): { attributes: AttributeMap; events: SpanEventRecord[]; links: SpanLinkRecord[] } {
  const droppedEvents = events.length - spanLimits.eventCount
  const droppedLinks = links.length - spanLimits.linkCount
  if (droppedEvents <= 0 && droppedLinks <= 0) return { attributes, events, links }
  const kept = { ...attributes }
  if (droppedEvents > 0) setAttribute(kept, DROPPED_EVENTS_COUNT, countValue(droppedEvents))
  if (droppedLinks > 0) setAttribute(kept, DROPPED_LINKS_COUNT, countValue(droppedLinks))
  return {
    attributes: kept,
    events: droppedEvents > 0 ? events.slice(0, spanLimits.eventCount) : events,
    links: droppedLinks > 0 ? links.slice(0, spanLimits.linkCount) : links,
  }
}
