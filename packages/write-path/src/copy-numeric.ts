// Postgres `numeric` fields of binary COPY (numeric_recv): int16 digit count, weight, sign and
// display scale, then base-10000 digits. Built from the decimal text the statement path would send,
// so that a value reads back with the digits and display scale numeric_in gives that text.

const POSITIVE = 0x0000
const NEGATIVE = 0x4000
// numeric's limits on the display scale and on the weight of its first digit (an int16).
const DSCALE_MAX = 0x3fff
const WEIGHT_MAX = 0x7fff
// What formatDecimal (exact-decimal.ts) and `numeric::text` write: no exponent, no plus sign.
const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/

// Costs repeat (the same model, the same token counts): each value's field is built once, in a
// cache that is emptied when full. Building one takes a few string operations (numericDigits),
// which showed in the writer's profile (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
const fields = new Map<number | string, Buffer>()
const FIELDS_MAX = 4096

/**
 * The field (length, then value) of a non-negative finite number, with the digits and display
 * scale Postgres gives the number read from JSON by the statement path: the fraction digits of
 * JavaScript's shortest decimal form (1e-7 is 0.0000001, scale 7). Undefined for any other number.
 */
export function numericFieldOfNumber(value: number): Buffer | undefined {
  const field = fields.get(value)
  if (field !== undefined) return field
  if (!Number.isFinite(value) || value < 0) return undefined
  return remembered(value, numericField(String(value), POSITIVE))
}

/** The field of a plain decimal text (`-12.50`, `0.0000001`), as numeric_in reads it; undefined for another form. */
export function numericFieldOfText(text: string): Buffer | undefined {
  const field = fields.get(text)
  if (field !== undefined) return field
  if (!PLAIN_DECIMAL.test(text)) return undefined
  const negative = text.charCodeAt(0) === 0x2d
  return remembered(text, numericField(negative ? text.slice(1) : text, negative ? NEGATIVE : POSITIVE))
}

function remembered(key: number | string, field: Buffer | undefined): Buffer | undefined {
  if (field === undefined) return undefined
  if (fields.size >= FIELDS_MAX) fields.clear()
  fields.set(key, field)
  return field
}

function numericField(unsigned: string, sign: number): Buffer | undefined {
  const { digits, weight, scale } = numericDigits(unsigned)
  if (scale > DSCALE_MAX || weight > WEIGHT_MAX || weight < -WEIGHT_MAX) return undefined
  const field = Buffer.alloc(4 + 8 + 2 * digits.length)
  let at = field.writeInt32BE(8 + 2 * digits.length, 0)
  at = field.writeInt16BE(digits.length, at)
  at = field.writeInt16BE(weight, at)
  // Zero has no digits and is positive, as Postgres stores `-0`.
  at = field.writeUInt16BE(digits.length === 0 ? POSITIVE : sign, at)
  at = field.writeInt16BE(scale, at)
  for (const digit of digits) at = field.writeInt16BE(digit, at)
  return field
}

/**
 * Unsigned decimal text, with or without an exponent (`12.5`, `1e-7`), as numeric's base-10000
 * digits, the weight of the first (its power of 10000) and the display scale: the digits after
 * the point once the exponent is applied. Leading and trailing zero digits are left out, as
 * Postgres stores them.
 */
function numericDigits(unsigned: string): { digits: number[]; weight: number; scale: number } {
  const [mantissa = '0', exponentText] = unsigned.split('e')
  const exponent = exponentText === undefined ? 0 : Number(exponentText)
  const [whole = '0', fraction = ''] = mantissa.split('.')
  // Shift the decimal point by the exponent over the digit string.
  const allDigits = whole + fraction
  const point = whole.length + exponent
  const intPart = point <= 0 ? '0' : allDigits.slice(0, point).padEnd(point, '0')
  const fracPart = point <= 0 ? '0'.repeat(-point) + allDigits : allDigits.slice(point)
  const scale = fracPart.length
  const intGroups = intPart.padStart(Math.ceil(intPart.length / 4) * 4, '0').match(/\d{4}/g) ?? []
  const fracGroups = fracPart === '' ? [] : (fracPart.padEnd(Math.ceil(fracPart.length / 4) * 4, '0').match(/\d{4}/g) ?? [])
  let digits = [...intGroups, ...fracGroups].map(Number)
  let weight = intGroups.length - 1
  while (digits.length > 0 && digits[0] === 0) {
    digits = digits.slice(1)
    weight--
  }
  while (digits.length > 0 && digits.at(-1) === 0) digits.pop()
  return { digits, weight: digits.length === 0 ? 0 : weight, scale }
}
