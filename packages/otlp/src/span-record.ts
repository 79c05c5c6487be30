// The validated, format-independent form of one span (SpanRecord, defined with the stored span's
// shape in @tracewell/span-schema), and the OTLP numbering of its kind and status.

import type { JsonTextBytes } from '@tracewell/json-text'
import type { SpanRecordWithText } from '@tracewell/span-schema'

export type { AnyValue, AttributeMap, SpanRecord, SpanEvent as SpanEventRecord, SpanLink as SpanLinkRecord } from '@tracewell/span-schema'

/** A record as the writer stores it: its attributes and events the bytes of their queued JSON text, or parsed (decodeSpanRecordsToStore). */
export type SpanRecordToStore = SpanRecordWithText<JsonTextBytes>

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
