import { isBase64 } from './base64.ts'
import type { ErrorPath } from './error-path.ts'

/** Trace ids are 16 bytes, span ids 8 (32 and 16 hex characters). */
export type IdBytes = 16 | 8

const HEX_PAIRS: string[] = []
for (let i = 0; i < 256; i++) HEX_PAIRS.push(i.toString(16).padStart(2, '0'))

/**
 * Checks `s` for exactly `hexLength` hex digits; returns the lowercase form, `null` when it is
 * not such a string, or `''` when all digits are zero (callers decide whether that is allowed).
 */
function lowerHex(s: string, start: number, hexLength: number): string | null {
  if (s.length - start !== hexLength) return null
  let upper = false
  let nonZero = false
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      if (c !== 48) nonZero = true
    } else if (c >= 97 && c <= 102) {
      nonZero = true
    } else if (c >= 65 && c <= 70) {
      nonZero = true
      upper = true
    } else {
      return null
    }
  }
  if (!nonZero) return ''
  const hex = start === 0 ? s : s.slice(start)
  return upper ? hex.toLowerCase() : hex
}

/** Lowercase hex of `bytes`; `''` when every byte is zero. */
function hexFromBytes(bytes: Uint8Array): string {
  let hex = ''
  let nonZero = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number
    nonZero |= b
    hex += HEX_PAIRS[b] as string
  }
  return nonZero === 0 ? '' : hex
}

function describe(bytes: IdBytes): string {
  return `expected ${bytes * 2} hex characters`
}

/**
 * An id from OTLP JSON: hex per the OTLP spec, but some exporters send the protobuf JSON mapping
 * (base64), so an exact base64 encoding of the right number of bytes is accepted too.
 */
export function idFromOtlpJson(value: unknown, bytes: IdBytes, path: ErrorPath): string {
  if (typeof value !== 'string') return path.fail(value === undefined ? 'required' : describe(bytes))
  let hex = lowerHex(value, 0, bytes * 2)
  if (hex === null && value.length >= 11 && value.length <= 24 && isBase64(value)) {
    const decoded = Buffer.from(value, 'base64')
    if (decoded.length === bytes) hex = hexFromBytes(decoded)
  }
  if (hex === null) return path.fail(describe(bytes))
  if (hex === '') return path.fail('must not be all zeros')
  return hex
}

/** An id from the Langtrace SDK format: hex, optionally `0x`-prefixed (the Python exporter). */
export function idFromLangtrace(value: unknown, bytes: IdBytes, path: ErrorPath): string {
  if (typeof value !== 'string') return path.fail(value === undefined ? 'required' : describe(bytes))
  const prefixed = value.length > 2 && value.charCodeAt(0) === 48 && (value.charCodeAt(1) | 32) === 120
  const hex = lowerHex(value, prefixed ? 2 : 0, bytes * 2)
  if (hex === null) return path.fail(describe(bytes))
  if (hex === '') return path.fail('must not be all zeros')
  return hex
}

/** An id from protobuf (raw bytes). */
export function idFromBytes(value: Uint8Array, bytes: IdBytes, path: ErrorPath): string {
  if (value.length !== bytes) return path.fail(`expected ${bytes} bytes, got ${value.length}`)
  const hex = hexFromBytes(value)
  if (hex === '') return path.fail('must not be all zeros')
  return hex
}

/**
 * A parent span id. Absent or empty means a root span. All zeros is read as "no parent" too:
 * some exporters (Zipkin/Jaeger bridges) mark roots that way, and rejecting the whole batch for it
 * would help nobody.
 */
export function parentIdFromOtlpJson(value: unknown, path: ErrorPath): string | null {
  if (value === undefined || value === null || value === '') return null
  if (typeof value === 'string' && isAllZeroHex(value)) return null
  return idFromOtlpJson(value, 8, path)
}

export function parentIdFromLangtrace(value: unknown, path: ErrorPath): string | null {
  if (value === undefined || value === null || value === '') return null
  if (typeof value === 'string' && isAllZeroHex(value)) return null
  return idFromLangtrace(value, 8, path)
}

export function parentIdFromBytes(value: Uint8Array, path: ErrorPath): string | null {
  if (value.length === 0) return null
  if (value.length === 8 && hexFromBytes(value) === '') return null
  return idFromBytes(value, 8, path)
}

function isAllZeroHex(s: string): boolean {
  const start = s.length > 2 && s.charCodeAt(0) === 48 && (s.charCodeAt(1) | 32) === 120 ? 2 : 0
  if (s.length - start !== 16) return false
  for (let i = start; i < s.length; i++) if (s.charCodeAt(i) !== 48) return false
  return true
}
