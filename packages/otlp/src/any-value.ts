import { recordDroppedAttributes, spanLimits } from './span-limits.ts'
// AnyValue and attributes in OTLP JSON, normalised to the one form SpanRecord keeps
// (span-record.ts): exactly one key, int64 as a decimal string, bytes as canonical base64.
import { internedKey, MAX_ANY_VALUE_DEPTH, setAttribute } from './attribute-map.ts'
import { isBase64 } from './base64.ts'
import type { ErrorPath } from './error-path.ts'
import { requireExactInteger } from './imprecise-integer.ts'
import { INT64_MAX, INT64_MIN, integerToDecimal, isDecimal, isInt64Number } from './int64.ts'
import type { AnyValue, AttributeMap } from './span-record.ts'
import { isObject } from './json-object.ts'
import { storableString } from './string-value-limit.ts'

/** int64 from a JSON string or number, as a canonical decimal string. */
function int64FromJson(value: unknown, path: ErrorPath): string {
  if (typeof value === 'number') {
    if (!isInt64Number(value)) path.fail('expected an integer within int64')
    requireExactInteger(value)
    return integerToDecimal(value)
  }
  if (typeof value !== 'string' || value.length > 21 || !isDecimal(value, true)) {
    return path.fail('expected an integer within int64')
  }
  const first = value.charCodeAt(0) === 45 ? 1 : 0
  // Short digit strings without a leading zero are canonical already and safely in range.
  if (value.length - first < 16 && (value.charCodeAt(first) !== 48 || value.length - first === 1)) {
    return value === '-0' ? '0' : value
  }
  const n = BigInt(value)
  if (n < INT64_MIN || n > INT64_MAX) path.fail('expected an integer within int64')
  return n.toString()
}

/** bytesValue: base64 in, canonical (standard alphabet, padded) base64 out. */
function bytesFromJson(value: unknown, path: ErrorPath): string {
  if (typeof value !== 'string' || !isBase64(value)) return path.fail('expected a base64 string')
  return Buffer.from(value, 'base64').toString('base64')
}

function doubleFromJson(value: unknown, path: ErrorPath): AnyValue {
  if (typeof value === 'number') return { doubleValue: value }
  // The protobuf JSON mapping spells the non-finite doubles as strings.
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return { doubleValue: value }
  return path.fail('expected a number')
}

function arrayFromJson(value: unknown, path: ErrorPath, depth: number): AnyValue {
  if (!isObject(value)) return path.fail('expected an object {values: [...]}')
  const list = value.values
  const values: AnyValue[] = []
  if (list === undefined || list === null) return { arrayValue: { values } }
  path.field('values')
  if (!Array.isArray(list)) path.fail('expected an array')
  for (let i = 0; i < list.length; i++) {
    path.index(i)
    values.push(anyValueFromJson(list[i], path, depth))
    path.pop()
  }
  path.pop()
  return { arrayValue: { values } }
}

function kvlistFromJson(value: unknown, path: ErrorPath, depth: number): AnyValue {
  if (!isObject(value)) return path.fail('expected an object {values: [...]}')
  const list = value.values
  const values: Array<{ key: string; value: AnyValue }> = []
  if (list === undefined || list === null) return { kvlistValue: { values } }
  path.field('values')
  if (!Array.isArray(list)) path.fail('expected an array')
  for (let i = 0; i < list.length; i++) {
    const entry: unknown = list[i]
    path.index(i)
    if (!isObject(entry)) path.fail('expected a {key, value} object')
    const key = entry.key
    if (typeof key !== 'string') path.failAt('key', 'expected a string')
    path.pop()
    path.key(key)
    values.push({ key, value: anyValueOrEmpty(entry.value, path, depth) })
    path.pop()
  }
  path.pop()
  return { kvlistValue: { values } }
}

/** A KeyValue's `value` may be left out (protobuf JSON drops unset messages): the empty AnyValue. */
function anyValueOrEmpty(value: unknown, path: ErrorPath, depth: number): AnyValue {
  return value === undefined || value === null ? {} : anyValueFromJson(value, path, depth)
}

/**
 * One AnyValue in OTLP JSON. `depth` counts the arrayValue/kvlistValue levels around it; the
 * current position is in `path`.
 */
function anyValueFromJson(value: unknown, path: ErrorPath, depth: number): AnyValue {
  if (!isObject(value)) return path.fail('expected an AnyValue object')
  let out: AnyValue | undefined
  let seen: string | undefined
  for (const field in value) {
    if (seen !== undefined) path.fail(`expected one value field, got ${JSON.stringify(seen)} and ${JSON.stringify(field)}`)
    seen = field
    const inner = value[field]
    path.field(field)
    switch (field) {
      case 'stringValue':
        if (typeof inner !== 'string') path.fail('expected a string')
        out = { stringValue: storableString(inner, spanLimits.attributeValueLength) }
        break
      case 'intValue':
        out = { intValue: int64FromJson(inner, path) }
        break
      case 'doubleValue':
        out = doubleFromJson(inner, path)
        break
      case 'boolValue':
        if (typeof inner !== 'boolean') path.fail('expected a boolean')
        out = { boolValue: inner }
        break
      case 'bytesValue':
        out = { bytesValue: bytesFromJson(inner, path) }
        break
      case 'arrayValue':
      case 'kvlistValue':
        if (depth >= MAX_ANY_VALUE_DEPTH) path.fail(`nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`)
        out = field === 'arrayValue' ? arrayFromJson(inner, path, depth + 1) : kvlistFromJson(inner, path, depth + 1)
        break
      default:
        path.pop()
        path.fail(`unknown AnyValue field ${JSON.stringify(field)}`)
    }
    path.pop()
  }
  return out ?? {}
}

/**
 * Attributes in either OTLP JSON form: the standard list `[{key, value}]` or the map
 * `{key: AnyValue}`. Absent or null means none. The current position is the attributes field.
 */
export function attributesFromJson(value: unknown, path: ErrorPath): AttributeMap {
  const out: AttributeMap = {}
  if (value === undefined || value === null) return out
  if (Array.isArray(value)) {
    // Only the first spanLimits.attributeCount are read; the rest are counted (span-limits.ts).
    const kept = Math.min(value.length, spanLimits.attributeCount)
    for (let i = 0; i < kept; i++) {
      const entry: unknown = value[i]
      if (!isObject(entry)) {
        path.index(i)
        path.fail('expected a {key, value} object')
      }
      const key = entry.key
      if (typeof key !== 'string') {
        path.index(i)
        path.failAt('key', 'expected a string')
      }
      path.key(key)
      setAttribute(out, internedKey(key, i), anyValueOrEmpty(entry.value, path, 0))
      path.pop()
    }
    recordDroppedAttributes(out, value.length - kept)
    return out
  }
  if (!isObject(value)) return path.fail('expected a list of {key, value} or a map of AnyValue')
  let count = 0
  for (const key in value) {
    if (count++ >= spanLimits.attributeCount) continue
    path.key(key)
    setAttribute(out, key, anyValueOrEmpty(value[key], path, 0))
    path.pop()
  }
  recordDroppedAttributes(out, count - spanLimits.attributeCount)
  return out
}
