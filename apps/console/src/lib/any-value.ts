import { plainValue } from '@tracewell/llm-messages'
import type { AnyValue, Attributes } from '../api/types.ts'

// How the attribute tables show values; reading a value is @tracewell/llm-messages' (plainValue).

/** How a value is shown in an attribute table: strings as they are, anything else as JSON. */
export function displayValue(value: AnyValue | undefined): string {
  const plain = plainValue(value)
  if (typeof plain === 'string') return plain
  return JSON.stringify(plain)
}

/** Attribute entries sorted by key, for display. */
export function sortedEntries(attributes: Attributes | undefined): Array<[string, AnyValue]> {
  return Object.entries(attributes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}
