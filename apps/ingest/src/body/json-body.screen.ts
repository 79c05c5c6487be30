import { JsonScanner, type JsonScanResult } from '@tracewell/json-text'
import { jsonTooDeep, malformedJson, tooManyJsonValues } from '../errors.ts'
import type { BodyScreen } from './body.reader.ts'

/**
 * JSON bodies up to this size go straight to JSON.parse: even the densest (`[1,1,1,…`) holds
 * about 131,000 values and costs it milliseconds, and most requests are far smaller.
 */
export const PARSE_DIRECTLY_UP_TO_BYTES = 256 * 1024

/** Far deeper than any trace body (AnyValue nesting stops at 32 levels); bounds the scan's stack. */
export const MAX_JSON_DEPTH = 512

/**
 * Checks a larger JSON body chunk by chunk while it arrives or is inflated, before anything
 * parses it: malformed JSON, more than `maxValues` values or nesting deeper than MAX_JSON_DEPTH
 * is refused at the chunk that shows it, so the rest is never inflated or joined into one buffer.
 * Each chunk costs microseconds, and other requests are served between chunks. JSON.parse then
 * runs only on a document whose cost is bounded, once; an error is located without parsing
 * the body again.
 */
export function jsonBodyScreen(maxValues: number): BodyScreen {
  // The first chunks are only held until the body turns out to be larger than the threshold.
  let held: Buffer[] | null = []
  let heldBytes = 0
  const scanner = new JsonScanner({ maxValues, maxDepth: MAX_JSON_DEPTH })
  return {
    write(chunk) {
      if (held === null) return refusal(scanner.write(chunk))
      held.push(chunk)
      heldBytes += chunk.length
      if (heldBytes <= PARSE_DIRECTLY_UP_TO_BYTES) return undefined
      const chunks = held
      held = null
      for (const earlier of chunks) {
        const refused = refusal(scanner.write(earlier))
        if (refused) return refused
      }
      return undefined
    },
    end() {
      return held === null ? refusal(scanner.end()) : undefined
    },
  }
}

function refusal(result: JsonScanResult | undefined): Error | undefined {
  switch (result?.kind) {
    case undefined:
    case 'valid':
      return undefined
    case 'malformed':
      return malformedJson(`${result.reason} at position ${result.position}`)
    case 'too-many-values':
      return tooManyJsonValues(result.limit)
    case 'too-deep':
      return jsonTooDeep(result.limit)
  }
}
