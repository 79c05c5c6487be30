import type { AnyValue, Attributes } from '../api/types.ts'

/** An OTLP AnyValue as plain JavaScript: strings, numbers, booleans, arrays and objects. */
export function plainValue(value: AnyValue | undefined): unknown {
  if (value === undefined || value === null) return null
  if (typeof value !== 'object') return value
  if (value.stringValue !== undefined) return value.stringValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return Number(value.doubleValue)
  if (value.boolValue !== undefined) return value.boolValue
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plainValue)
  if (value.kvlistValue !== undefined) return Object.fromEntries((value.kvlistValue.values ?? []).map((entry) => [entry.key, plainValue(entry.value)]))
  if (value.bytesValue !== undefined) return value.bytesValue
  return null
}

/** How a value is shown in an attribute table: strings as they are, anything else as JSON. */
export function displayValue(value: AnyValue | undefined): string {
  const plain = plainValue(value)
  if (typeof plain === 'string') return plain
  return JSON.stringify(plain)
}

/** An attribute's value as text (numbers and booleans written out), or undefined when absent. */
export function attributeText(attributes: Attributes | undefined, key: string): string | undefined {
  const value = attributes?.[key]
  if (value === undefined) return undefined
  const plain = plainValue(value)
  if (plain === null) return undefined
  return typeof plain === 'string' ? plain : JSON.stringify(plain)
}

/** Attribute entries sorted by key, for display. */
export function sortedEntries(attributes: Attributes | undefined): Array<[string, AnyValue]> {
  return Object.entries(attributes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}
