// Attribute values as the Langtrace SDKs send them: plain JSON values (what the OTel SDKs keep in
// memory), converted to the AnyValue form SpanRecord keeps.
import { MAX_ANY_VALUE_DEPTH, setAttribute } from './attribute-map.ts'
import type { ErrorPath } from './error-path.ts'
import { integerToDecimal, isInt64Number } from './int64.ts'
import type { AnyValue, AttributeMap } from './span-record.ts'
import { isObject } from './json-object.ts'
import { recordDroppedAttributes, spanLimits } from './span-limits.ts'
import { storableString } from './string-value-limit.ts'

/**
 * One plain value as an AnyValue; `undefined` for null (an attribute that is not set). Integers
 * become intValue (when they fit int64), other numbers doubleValue, plain objects kvlistValue.
 */
function anyValueFromPlain(value: unknown, path: ErrorPath, depth: number): AnyValue | undefined {
  switch (typeof value) {
    case 'string':
      return { stringValue: storableString(value, spanLimits.attributeValueLength) }
    case 'boolean':
      return { boolValue: value }
    case 'number':
      if (isInt64Number(value)) return { intValue: integerToDecimal(value) }
      return { doubleValue: value }
    case 'undefined':
      return undefined
    case 'object': {
      if (value === null) return undefined
      if (depth >= MAX_ANY_VALUE_DEPTH) return path.fail(`nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`)
      if (Array.isArray(value)) {
        const values: AnyValue[] = []
        for (let i = 0; i < value.length; i++) {
          path.index(i)
          // Arrays keep their positions: a null element is the empty AnyValue.
          values.push(anyValueFromPlain(value[i], path, depth + 1) ?? {})
          path.pop()
        }
        return { arrayValue: { values } }
      }
      const values: Array<{ key: string; value: AnyValue }> = []
      const record = value as Record<string, unknown>
      for (const key in record) {
        path.key(key)
        const inner = anyValueFromPlain(record[key], path, depth + 1)
        if (inner !== undefined) values.push({ key, value: inner })
        path.pop()
      }
      return { kvlistValue: { values } }
    }
    default:
      return path.fail('expected a string, number, boolean, array or object')
  }
}

/** A plain `{name: value}` attribute object; null values are left out. Absent or null means none. */
export function attributesFromPlain(value: unknown, path: ErrorPath): AttributeMap {
  const out: AttributeMap = {}
  if (value === undefined || value === null) return out
  if (!isObject(value)) return path.fail('expected an object of attribute values')
  // Only the first spanLimits.attributeCount are read; the rest are counted (span-limits.ts).
  let count = 0
  for (const key in value) {
    if (count++ >= spanLimits.attributeCount) continue
    path.key(key)
    const inner = anyValueFromPlain(value[key], path, 0)
    if (inner !== undefined) setAttribute(out, key, inner)
    path.pop()
  }
  recordDroppedAttributes(out, count - spanLimits.attributeCount)
  return out
}
