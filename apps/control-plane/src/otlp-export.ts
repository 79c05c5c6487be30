import type { SpanDto } from '@tracewell/db'

// A stored trace written back as an OTLP/JSON ExportTraceServiceRequest (the protobuf JSON
// mapping), so it can be sent to any OTLP receiver, this one included: spans grouped by resource
// and scope, attribute maps back in their list form. Derived columns are not exported: a receiver
// derives them again from the attributes.

type AttributeMap = Record<string, unknown>

const keyValues = (attributes: AttributeMap) => Object.entries(attributes).map(([key, value]) => ({ key, value }))

interface StoredEvent {
  timeUnixNano: string
  name: string
  attributes: AttributeMap
}

interface StoredLink {
  traceId: string
  spanId: string
  traceState: string | null
  attributes: AttributeMap
}

function otlpSpan(span: SpanDto) {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    ...(span.traceState ? { traceState: span.traceState } : {}),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
    attributes: keyValues(span.attributes),
    events: (span.events as StoredEvent[]).map((event) => ({ timeUnixNano: event.timeUnixNano, name: event.name, attributes: keyValues(event.attributes) })),
    links: (span.links as StoredLink[]).map((link) => ({
      traceId: link.traceId,
      spanId: link.spanId,
      ...(link.traceState ? { traceState: link.traceState } : {}),
      attributes: keyValues(link.attributes),
    })),
    status: { code: span.status.code, ...(span.status.message ? { message: span.status.message } : {}) },
  }
}

export function toOtlpJson(spans: readonly SpanDto[]) {
  const resources = new Map<string, { attributes: AttributeMap; scopes: Map<string, { name: string | null; version: string | null; spans: SpanDto[] }> }>()
  for (const span of spans) {
    const resourceKey = JSON.stringify(span.resourceAttributes)
    let resource = resources.get(resourceKey)
    if (!resource) resources.set(resourceKey, (resource = { attributes: span.resourceAttributes, scopes: new Map() }))
    const scopeKey = JSON.stringify([span.scopeName, span.scopeVersion])
    let scope = resource.scopes.get(scopeKey)
    if (!scope) resource.scopes.set(scopeKey, (scope = { name: span.scopeName, version: span.scopeVersion, spans: [] }))
    scope.spans.push(span)
  }
  return {
    resourceSpans: [...resources.values()].map((resource) => ({
      resource: { attributes: keyValues(resource.attributes) },
      scopeSpans: [...resource.scopes.values()].map((scope) => ({
        scope: { name: scope.name ?? '', ...(scope.version ? { version: scope.version } : {}) },
        spans: scope.spans.map(otlpSpan),
      })),
    })),
  }
}
