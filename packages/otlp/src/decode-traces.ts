import { spansFromLangtrace } from './langtrace.parser.ts'
import { spansFromOtlpJson } from './otlp-json.parser.ts'
import { spansFromOtlpProtobuf } from './otlp-protobuf.parser.ts'
import type { SpanRecord } from './span-record.ts'
import { SpanValidationError } from './validation-error.ts'

/** The body formats of SPEC §2, told apart by Content-Type and shape (never by User-Agent). */
export type TraceBodyFormat = 'otlp-json' | 'otlp-protobuf' | 'langtrace-json'

/**
 * Decodes an already-parsed JSON body: an object is OTLP JSON, a top-level array is the Langtrace
 * SDK format. Throws SpanValidationError (the whole batch is rejected on the first problem).
 */
export function decodeJsonTraces(body: unknown): { format: TraceBodyFormat; spans: SpanRecord[] } {
  if (Array.isArray(body)) return { format: 'langtrace-json', spans: spansFromLangtrace(body) }
  if (typeof body === 'object' && body !== null) {
    return { format: 'otlp-json', spans: spansFromOtlpJson(body as Record<string, unknown>) }
  }
  throw new SpanValidationError('body', 'expected an OTLP JSON object or a Langtrace array of spans')
}

/**
 * Decodes an OTLP ExportTraceServiceRequest protobuf body. Throws SpanValidationError; bytes that
 * are not such a message fail at path `body`.
 */
export function decodeProtobufTraces(body: Uint8Array): { format: 'otlp-protobuf'; spans: SpanRecord[] } {
  return { format: 'otlp-protobuf', spans: spansFromOtlpProtobuf(body) }
}
