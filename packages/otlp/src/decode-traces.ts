import { isUtf8 } from 'node:buffer'
import { parseJsonText } from '@tracewell/json-text'
import { exactInt64Reviver, ImpreciseIntegerError } from './imprecise-integer.ts'
import { spansFromLangtrace } from './langtrace.parser.ts'
import { spansFromOtlpJson } from './otlp-json.parser.ts'
import { spansFromOtlpProtobuf } from './otlp-protobuf.parser.ts'
import type { SpanCollector } from './span-collector.ts'
import type { SpanRecord } from './span-record.ts'
import { SpanValidationError } from './validation-error.ts'

/** The accepted body formats (docs/api.md#send-traces), told apart by Content-Type and shape (never by User-Agent). */
export type TraceBodyFormat = 'otlp-json' | 'otlp-protobuf' | 'langtrace-json'

/** The valid spans of a request body, what was rejected, and which of the accepted formats it was in. */
export interface DecodedTraces {
  format: TraceBodyFormat
  spans: SpanRecord[]
  /** Spans rejected one by one for failing validation (partial success); 0 when all were valid. */
  rejected: number
  /** The messages of the first few rejections, each starting with its path. */
  problems: string[]
}

const decoded = (format: TraceBodyFormat, collected: SpanCollector): DecodedTraces => ({
  format,
  spans: collected.spans,
  rejected: collected.rejected,
  problems: collected.problems,
})

/**
 * Decodes an already-parsed JSON body: an object is OTLP JSON, a top-level array is the Langtrace
 * SDK format. Invalid spans are rejected one by one; SpanValidationError is thrown when the body
 * is not a batch at all or none of its spans is valid, ImpreciseIntegerError when an int64 field
 * holds a number past 2^53, which parsing may have rounded (decodeTraceBody parses such text again).
 */
export function decodeJsonTraces(body: unknown): DecodedTraces {
  if (Array.isArray(body)) return decoded('langtrace-json', spansFromLangtrace(body))
  if (typeof body === 'object' && body !== null) return decoded('otlp-json', spansFromOtlpJson(body as Record<string, unknown>))
  throw new SpanValidationError('body', 'expected an OTLP JSON object or a Langtrace array of spans')
}

/**
 * Decodes an OTLP ExportTraceServiceRequest protobuf body, as decodeJsonTraces does; bytes that
 * are not such a message fail at path `body`.
 */
export function decodeProtobufTraces(body: Uint8Array): DecodedTraces {
  return decoded('otlp-protobuf', spansFromOtlpProtobuf(body))
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
 * Decodes a whole request body, as ingest does before accepting it (and the writer for jobs an
 * older ingest queued as request bodies): both keep exactly the same spans. JSON bodies throw
 * MalformedJsonError when they are not UTF-8 JSON, every format SpanValidationError when they are
 * not a batch or hold no valid span.
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
  try {
    return decodeJsonTraces(parsed)
  } catch (error) {
    if (!(error instanceof ImpreciseIntegerError)) throw error
  }
  // An int64 written as a JSON number past 2^53: parsed again, keeping its digits.
  try {
    return decodeJsonTraces(parseJsonText(text, exactInt64Reviver))
  } catch (error) {
    // Only an int64 field under a key written with escapes gets here (the reviver sees a placeholder).
    if (error instanceof ImpreciseIntegerError) throw new SpanValidationError('body', 'an integer past 2^53 given as a JSON number under an escaped key; send int64 values as strings')
    throw error
  }
}
