// Timestamps are nanoseconds since the Unix epoch. They exceed 2^53, so they are handled as
// BigInt and leave this package as decimal strings (never lose precision). Every reader
// also bounds them to int64, as the queue and the database store them.
import type { ErrorPath } from './error-path.ts'
import { requireExactInteger } from './imprecise-integer.ts'
import { INT64_MAX, isDecimal } from './int64.ts'
import type { LongLike } from './int64.ts'

const NANOS_PER_SECOND = 1_000_000_000n
const NANOS_PER_MILLI = 1_000_000n

function checkRange(nanos: bigint, path: ErrorPath): bigint {
  if (nanos > INT64_MAX) path.fail('exceeds the int64 maximum')
  return nanos
}

/** OTLP JSON: a decimal string (the JSON mapping of fixed64) or a non-negative integer number. */
export function nanosFromOtlpJson(value: unknown, path: ErrorPath): bigint {
  if (typeof value === 'string') {
    // 30 digits is far past int64 already; the bound keeps BigInt() off megabyte-long strings.
    if (value.length > 30 || !isDecimal(value, false)) path.fail('expected a decimal string of nanoseconds')
    return checkRange(BigInt(value), path)
  }
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) path.fail('expected a non-negative integer of nanoseconds')
    const nanos = checkRange(BigInt(value), path)
    requireExactInteger(value)
    return nanos
  }
  return path.fail(value === undefined ? 'required' : 'expected a decimal string of nanoseconds')
}

/** Protobuf fixed64 (unsigned). */
export function nanosFromFixed64(value: LongLike | number, path: ErrorPath): bigint {
  if (typeof value === 'number') return checkRange(BigInt(value), path)
  // The sign bit of `high` set means >= 2^63 for an unsigned value.
  if (value.high < 0) path.fail('exceeds the int64 maximum')
  return (BigInt(value.high) << 32n) | BigInt(value.low >>> 0)
}

/** The JS SDK's HrTime: `[seconds, nanoseconds]`. */
export function nanosFromHrTime(value: unknown, path: ErrorPath): bigint {
  if (!Array.isArray(value) || value.length !== 2) return path.fail('expected [seconds, nanoseconds]')
  const seconds: unknown = value[0]
  const nanos: unknown = value[1]
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
    return path.fail('expected [seconds, nanoseconds] with non-negative integer seconds')
  }
  if (typeof nanos !== 'number' || !Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) {
    return path.fail('expected [seconds, nanoseconds] with integer nanoseconds 0–999999999')
  }
  return checkRange(BigInt(seconds) * NANOS_PER_SECOND + BigInt(nanos), path)
}

function digitsAt(s: string, at: number, count: number): number {
  let n = 0
  for (let i = at; i < at + count; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return -1
    n = n * 10 + (c - 48)
  }
  return n
}

const ISO_PROBLEM = 'expected an ISO 8601 date-time such as 2024-11-20T21:25:30.275984Z'

/**
 * ISO 8601 as the legacy Python exporter writes it (`2024-11-20T21:25:30.275984Z`), with up to 9
 * fraction digits and `Z` or a `±HH:MM` offset (none means UTC). The fraction is read as an
 * integer, so no float rounding ever touches the nanoseconds.
 */
export function nanosFromIso(value: unknown, path: ErrorPath): bigint {
  if (typeof value !== 'string') return path.fail(value === undefined ? 'required' : ISO_PROBLEM)
  const s = value
  if (s.length < 19 || s.length > 40) return path.fail(ISO_PROBLEM)
  const sep = s.charCodeAt(10)
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || (sep !== 84 && sep !== 116 && sep !== 32)) {
    return path.fail(ISO_PROBLEM)
  }
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return path.fail(ISO_PROBLEM)
  const year = digitsAt(s, 0, 4)
  const month = digitsAt(s, 5, 2)
  const day = digitsAt(s, 8, 2)
  const hour = digitsAt(s, 11, 2)
  const minute = digitsAt(s, 14, 2)
  const second = digitsAt(s, 17, 2)
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59) {
    return path.fail(ISO_PROBLEM)
  }
  if (second < 0 || second > 59 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return path.fail(ISO_PROBLEM)
  // Also keeps Date.UTC away from years 0–99, which it would read as 1900–1999.
  if (year < 1970) return path.fail('must not be before the Unix epoch')

  let i = 19
  let fraction = 0
  if (s.charCodeAt(i) === 46 || s.charCodeAt(i) === 44) {
    const start = ++i
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++
    const count = i - start
    if (count === 0 || count > 9) return path.fail(ISO_PROBLEM)
    fraction = digitsAt(s, start, count) * 10 ** (9 - count)
  }

  let offsetMinutes = 0
  if (i < s.length) {
    const c = s.charCodeAt(i)
    if ((c === 90 || c === 122) && i + 1 === s.length) {
      // Z
    } else if ((c === 43 || c === 45) && (s.length - i === 6 || s.length - i === 5)) {
      const colon = s.length - i === 6
      if (colon && s.charCodeAt(i + 3) !== 58) return path.fail(ISO_PROBLEM)
      const oh = digitsAt(s, i + 1, 2)
      const om = digitsAt(s, i + (colon ? 4 : 3), 2)
      if (oh < 0 || oh > 23 || om < 0 || om > 59) return path.fail(ISO_PROBLEM)
      offsetMinutes = (c === 45 ? -1 : 1) * (oh * 60 + om)
    } else {
      return path.fail(ISO_PROBLEM)
    }
  }

  const millis = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * 60_000
  if (millis < 0) return path.fail('must not be before the Unix epoch')
  return checkRange(BigInt(millis) * NANOS_PER_MILLI + BigInt(fraction), path)
}
