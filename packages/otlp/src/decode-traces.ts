import { isUtf8 } from 'node:buffer'
import { parseJsonText } from '@tracewell/json-text'
import { spansFromLangtrace } from './langtrace.parser.ts'
import { spansFromOtlpJson } from './otlp-json.parser.ts'
import { spansFromOtlpProtobuf } from './otlp-protobuf.parser.ts'
import type { SpanRecord } from './span-record.ts'
import { SpanValidationError } from './validation-error.ts'

/** The accepted body formats (docs/api.md#send-traces), told apart by Content-Type and shape (never by User-Agent). */
export type TraceBodyFormat = 'otlp-json' | 'otlp-protobuf' | 'langtrace-json'

/** The spans of a request body, and which of the accepted formats it was in. */
export interface DecodedTraces {
  format: TraceBodyFormat
  spans: SpanRecord[]
}

/**
 * Decodes an already-parsed JSON body: an object is OTLP JSON, a top-level array is the Langtrace
 * SDK format. Throws SpanValidationError (the whole batch is rejected on the first problem).
 */
export function decodeJsonTraces(body: unknown): DecodedTraces {
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

/** Thrown for a JSON body that is not UTF-8 or not JSON; `text` is the body (when it was UTF-8), for locating the error. */
export class MalformedJsonError extends Error {
  override name = 'MalformedJsonError'
  readonly text: string | null

  constructor(reason: string, text: string | null) {
    super(reason)
    this.text = text
  }
}

/**
 * Decodes a whole request body, as ingest does before accepting it and the writer does again
 * for bodies queued by reference. JSON bodies throw MalformedJsonError when they are not UTF-8
 * JSON, every format SpanValidationError when they are not a valid batch.
 */
export function decodeTraceBody(body: Uint8Array, encoding: 'json' | 'protobuf'): DecodedTraces {
  if (encoding === 'protobuf') return decodeProtobufTraces(body)
  // JSON is UTF-8 (RFC 8259); silently turning bad bytes into U+FFFD would store what was not sent.
  if (!isUtf8(body)) throw new MalformedJsonError('not valid UTF-8', null)
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
  let parsed: unknown
  try {
    // Not JSON.parse: it can corrupt object keys written with escapes (see @tracewell/json-text).
    parsed = parseJsonText(text)
  } catch (error) {
    throw new MalformedJsonError(error instanceof Error ? error.message : String(error), text)
  }
  return decodeJsonTraces(parsed)
}
