import type { JsonReviver } from '@tracewell/json-text'
import { isDecimal } from './int64.ts'

// OTLP JSON carries int64 values (attribute intValue, nanosecond times) as decimal strings, but
// some senders write JSON numbers, and JSON.parse rounds an integer past 2^53 to the nearest
// double (9007199254740993 becomes …992). Such a number is never accepted as it was parsed:
// decoding stops at it with ImpreciseIntegerError, and decodeTraceBody parses the text again with
// a reviver that keeps the digits of those fields. Bodies without one (every OTel SDK's) are
// parsed once, as before.

/** A JSON number that JSON.parse may have rounded, met where an exact int64 is expected. */
export class ImpreciseIntegerError extends Error {
  override name = 'ImpreciseIntegerError'
}

/** Throws ImpreciseIntegerError for an integer past 2^53 (which a double cannot hold exactly). */
export function requireExactInteger(value: number): void {
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw new ImpreciseIntegerError('an integer past 2^53 given as a JSON number')
}

const isInt64Field = (key: string) => key === 'intValue' || key.endsWith('UnixNano')

/** Keeps the source digits of large integers in int64 fields, as the decimal strings OTLP JSON uses. */
export const exactInt64Reviver: JsonReviver = (key, value, context) => {
  if (typeof value !== 'number' || Number.isSafeInteger(value) || !isInt64Field(key)) return value
  const source = context?.source
  return source !== undefined && isDecimal(source, true) ? source : value
}
