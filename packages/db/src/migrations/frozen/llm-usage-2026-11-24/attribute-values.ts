// Readers of one attribute value (an OTLP AnyValue in its JSON form, as @tracewell/otlp normalises
// it: exactly one of stringValue, intValue as a decimal string, doubleValue, …). Declared
// structurally so this package does not depend on the parser. A value of the wrong kind reads as
// null, never as an error: the derived columns are a convenience, the attributes stay as sent.

/** An attribute value in the OTLP JSON form. */
export type AttributeValue = Readonly<Record<string, unknown>>

/** Attributes in the map form: attribute name → value. */
export type Attributes = Readonly<Record<string, AttributeValue | undefined>>

/** A non-empty stringValue. */
export function readText(value: AttributeValue): string | null {
  const text = value.stringValue
  return typeof text === 'string' && text !== '' ? text : null
}

/** An identifier (session, user): a non-empty string, or an integer id as its decimal text. */
export function readId(value: AttributeValue): string | null {
  return readText(value) ?? (typeof value.intValue === 'string' ? value.intValue : null)
}

const DECIMAL_DIGITS = /^\d{1,15}$/

/**
 * A token count: a non-negative safe integer given as intValue, an integral doubleValue, or a
 * numeric string (some SDKs stringify every attribute).
 */
export function readCount(value: AttributeValue): number | null {
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
export function readUsd(value: AttributeValue): number | null {
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
export function readJsonCount(value: AttributeValue, field: string): number | null {
  const text = value.stringValue
  if (typeof text !== 'string' || text.length > 4096 || !text.includes(field)) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  if (typeof parsed !== 'object' || parsed === null) return null
  const n = (parsed as Record<string, unknown>)[field]
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null
}
