import { gzipSync } from 'node:zlib'

// Request bodies an adversary sends to make one request cost everyone: small once gzipped,
// tens of MB once inflated. Shared by the ingest tests and the hostile-bodies benchmark.

const STRING_ELEMENT = `"${'a'.repeat(4000)}",`

/**
 * About `bytes` of a JSON array of 4000-character strings that turns malformed at its very end (a
 * stray `}` after the last comma), where V8's message does not say where. `position` is that
 * character's index.
 */
export function malformedStringsJson(bytes: number): { text: string; position: number } {
  const text = `[${STRING_ELEMENT.repeat(Math.floor((bytes - 2) / STRING_ELEMENT.length))}}`
  return { text, position: text.length - 1 }
}

/** About `bytes` of `[1,1,1,…` ending in `ending`: as many values as bytes allow. */
export function denseJson(bytes: number, ending = ']'): string {
  return `[${'1,'.repeat(Math.floor((bytes - 1 - ending.length) / 2))}1${ending}`
}

/** The body gzipped as hard as gzip goes. */
export function gzipped(text: string): Buffer {
  return gzipSync(text, { level: 9 })
}

/** `depth` JSON arrays within each other, `[[[…]]]`: parses in V8, overflows Postgres's jsonb parser at a few thousand. */
export function nestedArraysJson(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`
}

/** A JSON string holding a lone UTF-16 surrogate, escaped as JSON allows: valid JSON, no valid Unicode, refused by jsonb. */
export const loneSurrogateJson = '"\\ud800"'
