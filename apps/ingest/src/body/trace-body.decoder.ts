import { decodeTraceBody as decodeBody, MalformedJsonError, type DecodedTraces } from '@tracewell/otlp'
import { malformedJson } from '../errors.ts'
import type { BodyFormat } from './media-type.ts'

/**
 * Turns the (inflated) body into validated span records. Throws a 400 for bytes that are not
 * JSON, saying where, and @tracewell/otlp's SpanValidationError (a 400 whose message starts with
 * the path) for anything that is not a valid batch.
 */
export function decodeTraceBody(body: Buffer, format: BodyFormat): DecodedTraces {
  try {
    return decodeBody(body, format)
  } catch (error) {
    if (error instanceof MalformedJsonError) throw malformedJson(error.text === null ? error.message : withPosition(error.message, error.text))
    throw error
  }
}

/** V8's message, with the position added where V8 leaves it out (an error message says where). */
function withPosition(reason: string, text: string): string {
  if (/position \d+/.test(reason)) return reason
  if (reason.startsWith('Unexpected end of JSON input')) return `${reason} at position ${text.length}`
  const position = text.length <= SEARCH_WHOLE_TEXT_UP_TO ? searchErrorPosition(text) : positionFromContext(reason, text)
  return position === -1 ? reason : `${reason} at position ${position}`
}

// Finding the position costs a few re-parses of prefixes of the body; for bodies over this size
// only V8's quoted context is searched for, so a malformed upload costs a bounded amount of work.
const SEARCH_WHOLE_TEXT_UP_TO = 256 * 1024
const V8_CONTEXT_CHARACTERS = 10
const quotedContext = /, (\.\.\.)?"([\s\S]*)"(?:\.\.\.)? is not valid JSON$/

/**
 * Whether the first `length` characters could still begin a valid document: V8 then complains
 * only about where they end (or not at all), never about a character before that.
 */
function isValidPrefix(text: string, length: number): boolean {
  try {
    JSON.parse(text.slice(0, length))
    return true
  } catch (error) {
    const message = (error as Error).message
    if (message.startsWith('Unexpected end of JSON input')) return true
    const position = /position (\d+)/.exec(message)?.[1]
    return position !== undefined && Number(position) >= length
  }
}

/** The index of the first character no valid document can have there (prefix validity is monotone). */
function searchErrorPosition(text: string): number {
  let valid = 0
  let invalid = text.length
  while (invalid - valid > 1) {
    const middle = (valid + invalid) >>> 1
    if (isValidPrefix(text, middle)) valid = middle
    else invalid = middle
  }
  return valid
}

/** V8 quotes 10 characters either side of the offending one; find where that text is (and check). */
function positionFromContext(reason: string, text: string): number {
  const quoted = quotedContext.exec(reason)
  if (!quoted) return -1
  const context = quoted[2] as string
  // Without the leading "..." the quote starts at index 0, so the offending character is the one
  // 10 before its end; with it, the one 10 after its start (the quote may stop short at the end).
  if (quoted[1] === undefined) {
    const position = context.length - V8_CONTEXT_CHARACTERS
    return text.startsWith(context) && position >= 0 ? position : -1
  }
  for (let start = text.indexOf(context), tries = 0; start !== -1 && tries < 8; start = text.indexOf(context, start + 1), tries++) {
    const position = start + V8_CONTEXT_CHARACTERS
    if (isValidPrefix(text, position) && !isValidPrefix(text, position + 1)) return position
  }
  return -1
}
