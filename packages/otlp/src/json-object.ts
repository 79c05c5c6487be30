import type { ErrorPath } from './error-path.ts'
import { emptyToNull } from './span-record.builder.ts'

// Reading fields of parsed JSON, shared by the OTLP JSON and Langtrace parsers.

export type JsonObject = Record<string, unknown>

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An optional string field; absent, null and '' all mean "not set". */
export function optionalString(object: JsonObject, field: string, path: ErrorPath): string | null {
  const value = object[field]
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') path.failAt(field, 'expected a string')
  return emptyToNull(value)
}
