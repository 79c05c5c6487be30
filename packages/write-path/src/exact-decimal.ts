// Costs are stored as Postgres `numeric` holding the shortest decimal form of each span's cost (the
// form JavaScript prints and the COPY encoder writes). Summed as floating point, a trace's cost
// drifts from the sum of its spans' stored costs in the last digits; summed here, as decimal
// integers scaled by a power of ten, it equals what `sum(total_cost_usd)` gives, to the last digit.

/** A decimal value as an integer and the number of its fraction digits. */
interface Scaled {
  units: bigint
  scale: number
}

/**
 * The decimal text of a finite number or a decimal string (`1e-7`, `0.1`, `12`), as units and scale.
 * Read by position, no arrays: the fold parses costs for every trace it counts, and splitting the
 * text three ways was most of this function's time.
 */
function parseDecimal(value: number | string): Scaled {
  const text = typeof value === 'number' ? String(value) : value
  let exponentAt = text.indexOf('e')
  if (exponentAt === -1) exponentAt = text.indexOf('E')
  const mantissaEnd = exponentAt === -1 ? text.length : exponentAt
  const exponent = exponentAt === -1 ? 0 : Number(text.slice(exponentAt + 1))
  const negative = text.charCodeAt(0) === 0x2d
  const start = negative ? 1 : 0
  const dot = text.indexOf('.', start)
  const hasFraction = dot !== -1 && dot < mantissaEnd
  let digits = hasFraction ? text.slice(start, dot) + text.slice(dot + 1, mantissaEnd) : text.slice(start, mantissaEnd)
  let scale = (hasFraction ? mantissaEnd - dot - 1 : 0) - exponent
  if (scale < 0) {
    digits += '0'.repeat(-scale)
    scale = 0
  }
  const units = BigInt(digits === '' ? '0' : digits)
  return { units: negative ? -units : units, scale }
}

const TEN = 10n

function rescale(value: Scaled, scale: number): bigint {
  return value.units * TEN ** BigInt(scale - value.scale)
}

/** The sum of two decimals (either may be null, meaning unknown-and-absent), as decimal text. */
export function addDecimals(a: string | null, b: number | string | null): string | null {
  if (b === null) return a
  if (a === null) return soleDecimalText(b)
  const sum = new DecimalSum()
  sum.add(a)
  sum.add(b)
  return sum.text
}

/**
 * A running sum of decimals, exact, kept as units and scale until its text is asked for: a sum
 * kept as text was parsed again with every span added to it, a visible share of the writer's
 * event loop on 100-span traces (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). A sum of one value (a one-span trace's cost) is never parsed.
 */
export class DecimalSum {
  #count = 0
  #first: number | string = 0
  #units = 0n
  #scale = 0

  add(value: number | string): void {
    this.#count++
    if (this.#count === 1) {
      this.#first = value
      return
    }
    if (this.#count === 2) this.#absorb(this.#first)
    this.#absorb(value)
  }

  /** The sum's decimal text, as addDecimals would have made it; null when nothing was added. */
  get text(): string | null {
    if (this.#count === 0) return null
    if (this.#count === 1) return soleDecimalText(this.#first)
    return formatDecimal({ units: this.#units, scale: this.#scale })
  }

  #absorb(value: number | string): void {
    const next = parseDecimal(value)
    if (next.scale > this.#scale) {
      this.#units *= TEN ** BigInt(next.scale - this.#scale)
      this.#scale = next.scale
    }
    this.#units += rescale(next, this.#scale)
  }
}

/** One decimal's text, as a sum of it alone. */
function soleDecimalText(value: number | string): string {
  return typeof value === 'number' ? decimalText(value) : formatDecimal(parseDecimal(value))
}

/**
 * A number's decimal text: JavaScript's own form when it has no exponent (it never has trailing
 * fraction zeros), which is what formatDecimal would make of it; the first cost of every trace.
 */
function decimalText(value: number): string {
  const text = String(value)
  return text.includes('e') ? formatDecimal(parseDecimal(text)) : text
}

/** Plain decimal text, without an exponent, trailing fraction zeros kept off. */
function formatDecimal({ units, scale }: Scaled): string {
  const negative = units < 0n
  let digits = (negative ? -units : units).toString()
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0')
    const whole = digits.slice(0, -scale)
    const fraction = digits.slice(-scale).replace(/0+$/, '')
    digits = fraction === '' ? whole : `${whole}.${fraction}`
  }
  return negative ? `-${digits}` : digits
}
