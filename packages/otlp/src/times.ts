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

/**
 * A span's times as SpanRecord keeps them: decimal strings of nanoseconds, end >= start, and the
 * duration between them.
 */
export interface SpanTimes {
  startTimeUnixNano: string
  endTimeUnixNano: string
  durationNs: string
}

/** The times of a span from validated nanoseconds (end >= start). */
export function spanTimes(start: bigint, end: bigint): SpanTimes {
  return { startTimeUnixNano: start.toString(), endTimeUnixNano: end.toString(), durationNs: (end - start).toString() }
}

/**
 * A timestamp from OTLP JSON: its canonical decimal string, as SpanRecord keeps it, and its value
 * as whole seconds and the nanoseconds past them (both exact doubles). Every span has two, decoded
 * by ingest and again by the writer: comparing and subtracting these costs a fraction of parsing
 * each into a BigInt and printing it again.
 */
export interface JsonTime {
  decimal: string
  seconds: number
  nanos: number
}

const INT64_MAX_SECONDS = 9_223_372_036
const INT64_MAX_NANOS_PAST_SECONDS = 854_775_807
// A double holds whole nanoseconds exactly below 2^53: durations of up to about 104 days.
const MAX_DURATION_SECONDS_IN_DOUBLE = 9_007_198

function decimalValue(digits: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) n = n * 10 + (digits.charCodeAt(i) - 48)
  return n
}

/** `digits` (ASCII digits only) as a time, bounded to int64. */
function timeFromDigits(digits: string, path: ErrorPath): JsonTime {
  const secondsEnd = Math.max(digits.length - 9, 0)
  // Up to 21 digits of seconds may round in a double, but only far above the int64 bound.
  const seconds = decimalValue(digits, 0, secondsEnd)
  const nanos = decimalValue(digits, secondsEnd, digits.length)
  if (seconds > INT64_MAX_SECONDS || (seconds === INT64_MAX_SECONDS && nanos > INT64_MAX_NANOS_PAST_SECONDS)) {
    path.fail('exceeds the int64 maximum')
  }
  // Leading zeros are the only way valid digits differ from the canonical decimal.
  const canonical = digits.length === 1 || digits.charCodeAt(0) !== 48
  const decimal = canonical ? digits : seconds === 0 ? String(nanos) : `${seconds}${String(nanos).padStart(9, '0')}`
  return { decimal, seconds, nanos }
}

/** OTLP JSON: a decimal string (the JSON mapping of fixed64) or a non-negative integer number. */
export function timeFromOtlpJson(value: unknown, path: ErrorPath): JsonTime {
  if (typeof value === 'string') {
    // 30 digits is far past int64 already; the bound keeps the digit loops off megabyte-long strings.
    if (value.length > 30 || !isDecimal(value, false)) path.fail('expected a decimal string of nanoseconds')
    return timeFromDigits(value, path)
  }
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) path.fail('expected a non-negative integer of nanoseconds')
    checkRange(BigInt(value), path)
    requireExactInteger(value)
    // A safe integer by now, which String() spells as plain digits.
    return timeFromDigits(String(value), path)
  }
  return path.fail(value === undefined ? 'required' : 'expected a decimal string of nanoseconds')
}

export function isBefore(time: JsonTime, other: JsonTime): boolean {
  return time.seconds < other.seconds || (time.seconds === other.seconds && time.nanos < other.nanos)
}

/** The times of a span from OTLP JSON (end >= start). */
export function spanTimesFromJson(start: JsonTime, end: JsonTime): SpanTimes {
  const seconds = end.seconds - start.seconds
  const durationNs =
    seconds < MAX_DURATION_SECONDS_IN_DOUBLE
      ? String(seconds * 1_000_000_000 + (end.nanos - start.nanos))
      : (BigInt(end.decimal) - BigInt(start.decimal)).toString()
  return { startTimeUnixNano: start.decimal, endTimeUnixNano: end.decimal, durationNs }
}

/** OTLP JSON time fields as BigInt, for the Langtrace formats (which mix them with other spellings). */
export function nanosFromOtlpJson(value: unknown, path: ErrorPath): bigint {
  return BigInt(timeFromOtlpJson(value, path).decimal)
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
