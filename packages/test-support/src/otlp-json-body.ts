// A type-only import: @tracewell/otlp's own tests use this package, so it is not declared as a
// dependency (turbo refuses dependency cycles); types are erased at run time.
import type { SpanRecord } from '@tracewell/otlp'

/**
 * Span records written back as an OTLP JSON request body (map-form attributes, one resourceSpans
 * entry per span), so tests can send records they built through everything that takes bodies.
 * Decoding the body gives the records back, derived fields included when they agree with the
 * attributes (as they do for records that were decoded from a body).
 */
function otlpJsonBody(spans: readonly SpanRecord[]): Buffer {
  const resourceSpans = spans.map((span) => ({
    resource: { attributes: span.resourceAttributes },
    scopeSpans: [
      {
        ...(span.scopeName === null ? {} : { scope: { name: span.scopeName, ...(span.scopeVersion === null ? {} : { version: span.scopeVersion }) } }),
        spans: [
          {
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            startTimeUnixNano: span.startTimeUnixNano,
            endTimeUnixNano: span.endTimeUnixNano,
            ...(span.traceState === null ? {} : { traceState: span.traceState }),
            status: { code: span.statusCode, ...(span.statusMessage === null ? {} : { message: span.statusMessage }) },
            attributes: span.attributes,
            events: span.events,
            links: span.links.map((link) => ({
              traceId: link.traceId,
              spanId: link.spanId,
              ...(link.traceState === null ? {} : { traceState: link.traceState }),
              attributes: link.attributes,
            })),
          },
        ],
      },
    ],
  }))
  return Buffer.from(JSON.stringify({ resourceSpans }))
}

/** One ingest request as the queue receives it (@tracewell/queue's AcceptedTraces), made from records. */
export function acceptedTraces(projectId: string, spans: SpanRecord[]): { projectId: string; spanCount: number; spans: SpanRecord[]; body: Buffer; bodyEncoding: 'json' } {
  return { projectId, spanCount: spans.length, spans, body: otlpJsonBody(spans), bodyEncoding: 'json' }
}
