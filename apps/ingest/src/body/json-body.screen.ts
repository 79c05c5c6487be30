import { isUtf8 } from 'node:buffer'
import { scanJsonInSlices } from '@tracewell/json-text'
import { jsonTooDeep, malformedJson, tooManyJsonValues } from '../errors.ts'

/**
 * JSON bodies up to this size go straight to JSON.parse: even the densest (`[1,1,1,…`) holds
 * about 131,000 values and costs it milliseconds, and most requests are far smaller.
 */
export const PARSE_DIRECTLY_UP_TO_BYTES = 256 * 1024

/** Far deeper than any trace body (AnyValue nesting stops at 32 levels); bounds the scan's stack. */
export const MAX_JSON_DEPTH = 512

// A few milliseconds of scanning per slice: other requests (and /healthz) wait at most that long.
const SCAN_SLICE_BYTES = 512 * 1024

/**
 * Checks a larger JSON body before anything parses it: malformed JSON, more than `maxValues`
 * values or deeper nesting than MAX_JSON_DEPTH is refused after one pass over the bytes that
 * builds nothing and yields to the event loop between slices. JSON.parse then runs only on a
 * document whose cost is bounded, once; an error is located without parsing the body again.
 */
export async function screenJsonBody(body: Buffer, maxValues: number): Promise<void> {
  // Not UTF-8 is answered by the decoder, which checks it anyway.
  if (body.length <= PARSE_DIRECTLY_UP_TO_BYTES || !isUtf8(body)) return
  const result = await scanJsonInSlices(body, { maxValues, maxDepth: MAX_JSON_DEPTH }, SCAN_SLICE_BYTES)
  switch (result.kind) {
    case 'valid':
      return
    case 'malformed':
      throw malformedJson(`${result.reason} at position ${result.position}`)
    case 'too-many-values':
      throw tooManyJsonValues(result.limit)
    case 'too-deep':
      throw jsonTooDeep(result.limit)
  }
}
