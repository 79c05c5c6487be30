// 64-bit integers in the three shapes they arrive in (decimal strings, JS numbers, protobuf
// Longs), always leaving as exact decimal strings: int64 attributes and nanosecond times exceed
// 2^53, where a JS number would round.

export const INT64_MIN = -9223372036854775808n
export const INT64_MAX = 9223372036854775807n
const TWO_POW_63 = 2 ** 63

/** A 64-bit protobuf value as protobufjs hands it over: a long.js Long (a number without long.js). */
export interface LongLike {
  low: number
  high: number
  unsigned: boolean
}

/** True when `s` is one or more ASCII digits, after a `-` when `signed` allows one. */
export function isDecimal(s: string, signed: boolean): boolean {
  const start = signed && s.charCodeAt(0) === 45 ? 1 : 0
  if (s.length === start) return false
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

/** True when `n` is an integer that int64 can hold (numbers past 2^53 are integers, if rounded ones). */
export function isInt64Number(n: number): boolean {
  return Number.isInteger(n) && n >= -TWO_POW_63 && n < TWO_POW_63
}

/** An integral number as a decimal string; `-0` becomes `0`. */
export function integerToDecimal(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString()
}

/** A signed protobuf int64 as a decimal string; the Number path covers everything within 2^53. */
export function signedLongToDecimal(value: LongLike | number): string {
  if (typeof value === 'number') return integerToDecimal(value)
  const { low, high } = value
  if (high >= -0x200000 && high < 0x200000) return String(high * 4294967296 + (low >>> 0))
  return BigInt.asIntN(64, (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0)).toString()
}
