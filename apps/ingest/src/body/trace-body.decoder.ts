import { countProtobufFields, decodeTraceBody as decodeBody, MalformedJsonError, type DecodedTraces } from '@tracewell/otlp'
import { scanJson } from '@tracewell/json-text'
import { malformedJson, tooManyProtobufFields } from '../errors.ts'
import { PARSE_DIRECTLY_UP_TO_BYTES } from './json-body.screen.ts'
import type { BodyFormat } from './media-type.ts'

/**
 * Turns the (inflated) body into validated span records, their LLM fields derived: the one decode
 * of a span between the request and its stored row (docs/architecture.md#decode-once). Throws a 400 for bytes that are not
 * JSON, saying where, and @tracewell/otlp's SpanValidationError (a 400 whose message starts with
 * the path) for anything that is not a valid batch. Larger JSON bodies have been through
 * screenJsonBody, so they are known to be JSON of a bounded size.
 */
export function decodeTraceBody(body: Buffer, format: BodyFormat, maxProtobufFields: number): DecodedTraces {
  // Counted on the wire first: decoding builds an object a field (see countProtobufFields).
  if (format === 'protobuf' && countProtobufFields(body, maxProtobufFields) > maxProtobufFields) throw tooManyProtobufFields(maxProtobufFields)
  try {
    return decodeBody(body, format)
  } catch (error) {
    if (error instanceof MalformedJsonError) throw malformedJson(error.text === null ? error.message : withPosition(error.message, body))
    throw error
  }
}

/**
 * V8's message, with the position added where V8 leaves it out. One scan of
 * the bytes finds it; only small bodies get here (larger ones were refused by the screen, which
 * names the position itself), so it never costs more than a moment.
 */
function withPosition(reason: string, body: Buffer): string {
  if (/position \d+/.test(reason) || body.length > PARSE_DIRECTLY_UP_TO_BYTES) return reason
  const scanned = scanJson(body)
  return scanned.kind === 'malformed' ? `${reason} at position ${scanned.position}` : reason
}
