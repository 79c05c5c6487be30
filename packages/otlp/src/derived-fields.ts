import type { AttributeMap } from './span-record.ts'

// The service columns derived from resource attributes (docs/api.md#send-traces). The LLM columns
// come from @tracewell/llm-usage, which holds the one table of every instrumentation's attribute names.

export interface ServiceFields {
  serviceName: string | null
  serviceVersion: string | null
}

/** The value of a string attribute; other kinds do not count. */
export function stringAttribute(attributes: AttributeMap, key: string): string | null {
  const value = attributes[key] as { stringValue?: unknown } | undefined
  return value !== undefined && typeof value.stringValue === 'string' ? value.stringValue : null
}

export function serviceFields(resourceAttributes: AttributeMap): ServiceFields {
  return {
    serviceName: stringAttribute(resourceAttributes, 'service.name'),
    serviceVersion: stringAttribute(resourceAttributes, 'service.version'),
  }
}
