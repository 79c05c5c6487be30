import type { AttributeMap, SpanRecord } from '@tracewell/span-schema'

// Masked spans leave ingest as an OTLP/JSON ExportTraceServiceRequest, a body every reader of the
// queue already decodes (the writer decodes it as it would have decoded the original, so the
// stored spans differ only by what was masked). Only the fields a span is stored with are
// written; the derived ones (user, session, model, tokens) are derived again from the attributes.

const keyValues = (attributes: AttributeMap) => Object.keys(attributes).map((key) => ({ key, value: attributes[key] }))

function otlpSpan(span: SpanRecord) {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId === null ? {} : { parentSpanId: span.parentSpanId }),
    ...(span.traceState === null ? {} : { traceState: span.traceState }),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
    attributes: keyValues(span.attributes),
    events: span.events.map((event) => ({ timeUnixNano: event.timeUnixNano, name: event.name, attributes: keyValues(event.attributes) })),
    links: span.links.map((link) => ({
      traceId: link.traceId,
      spanId: link.spanId,
      ...(link.traceState === null ? {} : { traceState: link.traceState }),
      attributes: keyValues(link.attributes),
    })),
    status: { code: span.statusCode, ...(span.statusMessage === null ? {} : { message: span.statusMessage }) },
  }
}

/** The spans as an OTLP/JSON body, grouped by resource (the decoders share one attributes object per resource) and scope. */
export function encodeOtlpJson(spans: readonly SpanRecord[]): Buffer {
  const resources = new Map<AttributeMap, Map<string, { name: string | null; version: string | null; spans: SpanRecord[] }>>()
  for (const span of spans) {
    let scopes = resources.get(span.resourceAttributes)
    if (scopes === undefined) resources.set(span.resourceAttributes, (scopes = new Map()))
    const scopeKey = `${span.scopeName ?? ''}\u0000${span.scopeVersion ?? ''}`
    let scope = scopes.get(scopeKey)
    if (scope === undefined) scopes.set(scopeKey, (scope = { name: span.scopeName, version: span.scopeVersion, spans: [] }))
    scope.spans.push(span)
  }
  const body = {
    resourceSpans: [...resources].map(([attributes, scopes]) => ({
      resource: { attributes: keyValues(attributes) },
      scopeSpans: [...scopes.values()].map((scope) => ({
        scope: { ...(scope.name === null ? {} : { name: scope.name }), ...(scope.version === null ? {} : { version: scope.version }) },
        spans: scope.spans.map(otlpSpan),
      })),
    })),
  }
  return Buffer.from(JSON.stringify(body))
}
