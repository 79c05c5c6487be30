// Stored attribute values (OTLP AnyValue) as plain JavaScript, for the conversation readers. The
// console has its own copy for display; this one is what the services and the console share.

/** An OTLP AnyValue, as stored: exactly one of these keys. */
export interface AnyValue {
  stringValue?: string
  intValue?: string | number
  doubleValue?: number | string
  boolValue?: boolean
  arrayValue?: { values?: AnyValue[] }
  kvlistValue?: { values?: Array<{ key: string; value?: AnyValue }> }
  bytesValue?: string
}

export type Attributes = Record<string, AnyValue>

export interface SpanEvent {
  timeUnixNano?: string
  name?: string
  attributes?: Attributes
}

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

/** An attribute's value as text (numbers and booleans written out), or undefined when absent. */
export function attributeText(attributes: Attributes | undefined, key: string): string | undefined {
  const value = attributes?.[key]
  if (value === undefined) return undefined
  const plain = plainValue(value)
  if (plain === null) return undefined
  return typeof plain === 'string' ? plain : JSON.stringify(plain)
}
