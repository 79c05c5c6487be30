// The one reader of attribute values (OTLP AnyValue in its JSON form, as @tracewell/otlp
// normalises it: exactly one of stringValue, intValue as a decimal string, doubleValue, …): as
// plain JavaScript and text for the conversation readers and the console, and as typed columns
// (text, id, count, USD) for @tracewell/llm-usage at ingest. A value of the wrong kind reads as
// null, never as an error: what is derived is a convenience, the attributes stay as sent.

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

/** Attributes in the map form: attribute name → value. */
export type Attributes = Readonly<Record<string, AnyValue>>

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

// ---- Typed readers, for the columns derived at ingest (@tracewell/llm-usage) ------------------

/** A non-empty stringValue. */
export function readText(value: AnyValue): string | null {
  const text = value.stringValue
  return typeof text === 'string' && text !== '' ? text : null
}

/** An identifier (session, user): a non-empty string, or an integer id as its decimal text. */
export function readId(value: AnyValue): string | null {
  return readText(value) ?? (typeof value.intValue === 'string' ? value.intValue : null)
}

const DECIMAL_DIGITS = /^\d{1,15}$/

/**
 * A token count: a non-negative safe integer given as intValue, an integral doubleValue, or a
 * numeric string (some SDKs stringify every attribute).
 */
export function readCount(value: AnyValue): number | null {
  let n: number | undefined
  if (typeof value.intValue === 'string') n = Number(value.intValue)
  else if (typeof value.doubleValue === 'number') n = value.doubleValue
  else if (typeof value.stringValue === 'string') {
    const text = value.stringValue.trim()
    if (DECIMAL_DIGITS.test(text)) n = Number(text)
  }
  return n !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : null
}

// A cost above this is taken for a unit mistake (cents, micro-dollars), not a price, and ignored.
const MAX_USD_PER_CALL = 1_000_000
const DECIMAL_NUMBER = /^\d{1,9}(\.\d{1,20})?$/

/** An amount in USD: a finite non-negative number as doubleValue, intValue or numeric string. */
export function readUsd(value: AnyValue): number | null {
  let n: number | undefined
  if (typeof value.doubleValue === 'number') n = value.doubleValue
  else if (typeof value.intValue === 'string') n = Number(value.intValue)
  else if (typeof value.stringValue === 'string') {
    const text = value.stringValue.trim()
    if (DECIMAL_NUMBER.test(text)) n = Number(text)
  }
  return n !== undefined && Number.isFinite(n) && n >= 0 && n <= MAX_USD_PER_CALL ? n : null
}

/**
 * A count inside a JSON object carried as a string attribute, e.g. the legacy Langtrace
 * `llm.token.counts` = '{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}'.
 */
export function readJsonCount(value: AnyValue, field: string): number | null {
  const n = jsonField(value, field)
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null
}

/** A non-empty string field of a small JSON object in a string attribute (OpenInference's invocation parameters). */
export function readJsonText(value: AnyValue, field: string): string | null {
  const text = jsonField(value, field)
  return typeof text === 'string' && text !== '' ? text : null
}

/** A top-level field of a JSON object written into a string attribute; undefined when there is none. */
function jsonField(value: AnyValue, field: string): unknown {
  const text = value.stringValue
  // Only small objects are parsed: these are parameter records, never prompts.
  if (typeof text !== 'string' || text.length > 4096 || !text.includes(field)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)[field] : undefined
}
