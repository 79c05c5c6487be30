import type { CostSource } from '@tracewell/llm-usage'

// The validated, format-independent form of one span: what ingest puts on the queue and what the
// writer stores. Every field is JSON-serialisable because it travels through Redis; queue payload
// changes must stay additive (jobs of the previous version may still be in flight).

/** OTLP AnyValue in its JSON form, normalised: exactly one key is present. */
export type AnyValue =
  | { stringValue: string }
  | { intValue: string } // int64 as a decimal string, so it survives JSON without rounding
  | { doubleValue: number | 'NaN' | 'Infinity' | '-Infinity' }
  | { boolValue: boolean }
  | { bytesValue: string } // base64
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: Array<{ key: string; value: AnyValue }> } }
  | Record<string, never> // an empty AnyValue (OTLP allows it)

/** Attributes in the map form: attribute name → AnyValue. */
export type AttributeMap = Record<string, AnyValue>

export interface SpanEventRecord {
  timeUnixNano: string
  name: string
  attributes: AttributeMap
}

export interface SpanLinkRecord {
  traceId: string
  spanId: string
  traceState: string | null
  attributes: AttributeMap
}

/** OTLP span kinds (the protobuf numbering; the JS SDK's numbering is shifted by one). */
export const SpanKind = {
  UNSPECIFIED: 0,
  INTERNAL: 1,
  SERVER: 2,
  CLIENT: 3,
  PRODUCER: 4,
  CONSUMER: 5,
} as const

/** OTLP status codes. */
export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const

export interface SpanRecord {
  traceId: string // 32 lowercase hex, not all zero
  spanId: string // 16 lowercase hex, not all zero
  parentSpanId: string | null // null for a root span
  name: string
  kind: number // 0–5, OTLP numbering
  startTimeUnixNano: string // decimal string, nanoseconds since the epoch
  endTimeUnixNano: string // >= start
  traceState: string | null
  statusCode: number // 0–2
  statusMessage: string | null
  attributes: AttributeMap
  resourceAttributes: AttributeMap
  scopeName: string | null
  scopeVersion: string | null
  events: SpanEventRecord[]
  links: SpanLinkRecord[]
  // Derived for querying (docs/semantic-conventions.md); the LLM columns by @tracewell/llm-usage's
  // table. Fields added after the first release are optional: inline queue jobs of the previous
  // version lack them.
  serviceName: string | null
  serviceVersion: string | null
  llmVendor: string | null
  llmModel: string | null // the requested model (the response's when none was reported)
  llmResponseModel?: string | null
  llmRequestType: string | null // the operation
  inputTokens: number | null
  outputTokens: number | null
  totalTokens: number | null
  cachedInputTokens?: number | null
  cacheWriteInputTokens?: number | null
  reasoningTokens?: number | null
  sessionId?: string | null
  userId?: string | null
  // USD; set here only from a cost the caller reported, otherwise by the writer when it stores the span.
  inputCostUsd?: number | null
  outputCostUsd?: number | null
  totalCostUsd?: number | null
  costSource?: CostSource | null
  durationNs: string // end − start, decimal string
}
