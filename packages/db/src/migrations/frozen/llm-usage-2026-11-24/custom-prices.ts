import type { TokenRates } from './token-usage.ts'

// A project's own model prices (self-hosted, fine-tuned or local models; a price of 0 marks a
// model as free rather than unknown). A price names a model exactly or by a glob pattern, and
// applies to spans that started at or after its effective date (no date: always).
//
// Pattern syntax: a glob over the whole model name, case-insensitive: `*` is any run of
// characters (including none, and including `/` and `:`), `?` is one character; nothing else is
// special. Globs rather than regular expressions because patterns are user input evaluated on the
// writer's hot path: a glob compiles to a linear-time expression, a regular expression may not.

export type ModelMatch = 'exact' | 'glob'

export interface CustomModelPrice {
  id: string
  model: string
  match: ModelMatch
  effectiveFrom: Date | null
  rates: TokenRates
}

/** At most this many `*` in one pattern, which bounds the matching work per model name. */
export const MAX_GLOB_STARS = 8

/** Why a pattern is refused, or null when it is a usable glob. */
export function globProblem(pattern: string): string | null {
  const stars = (pattern.replace(/\*+/g, '*').match(/\*/g) ?? []).length
  return stars > MAX_GLOB_STARS ? `at most ${MAX_GLOB_STARS} * wildcards` : null
}

export function globToRegExp(pattern: string): RegExp {
  let source = ''
  for (const char of pattern.replace(/\*+/g, '*')) {
    if (char === '*') source += '.*'
    else if (char === '?') source += '.'
    else source += char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')
  }
  return new RegExp(`^${source}$`, 'is')
}

interface CompiledPrice {
  price: CustomModelPrice
  test: (name: string) => boolean
  since: number
}

/**
 * One project's prices, compiled once (the writer keeps it for a short while, see the writer's
 * price cache). Which price applies to a call, in order:
 *  1. an exact name before a pattern;
 *  2. the response's model before the requested one (it is what ran);
 *  3. among prices matching the same way, the latest effective date not after the call
 *     (no date counts as the earliest), then the longest pattern, then the latest created.
 */
export class CustomPriceBook {
  readonly #exact: CompiledPrice[] = []
  readonly #globs: CompiledPrice[] = []

  /** `prices` newest first (as the repository lists them), so ties go to the latest created. */
  constructor(prices: readonly CustomModelPrice[]) {
    for (const price of prices) {
      const since = price.effectiveFrom?.getTime() ?? Number.NEGATIVE_INFINITY
      if (price.match === 'exact') {
        const name = price.model.toLowerCase()
        this.#exact.push({ price, since, test: (candidate) => candidate.toLowerCase() === name })
      } else {
        const regexp = globToRegExp(price.model)
        this.#globs.push({ price, since, test: (candidate) => regexp.test(candidate) })
      }
    }
    const order = (a: CompiledPrice, b: CompiledPrice) => b.since - a.since || b.price.model.length - a.price.model.length
    this.#exact.sort(order)
    this.#globs.sort(order)
  }

  get size(): number {
    return this.#exact.length + this.#globs.length
  }

  /** The price for a call to one of `models` (response model first) started at `at`. */
  priceFor(models: readonly string[], at: Date): CustomModelPrice | undefined {
    const time = at.getTime()
    for (const list of [this.#exact, this.#globs]) {
      for (const model of models) {
        const match = list.find((entry) => entry.since <= time && entry.test(model))
        if (match !== undefined) return match.price
      }
    }
    return undefined
  }
}

export const emptyPriceBook = new CustomPriceBook([])
