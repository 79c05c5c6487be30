import { listModelPrices, type Db, type ModelPriceDto } from '@tracewell/db'
import { CustomPriceBook, type CustomModelPrice } from '@tracewell/llm-usage'

/**
 * How long the writer uses a project's custom prices before reading them again: a price created,
 * changed or deleted through the control plane applies to spans stored this long after, at most.
 * Short, because a wrong price is stored with every span; long enough that a busy project costs
 * one small query per writer per interval rather than one per job.
 */
export const MODEL_PRICE_CACHE_TTL_MS = 10_000

interface Entry {
  expiresAt: number
  book: Promise<CustomPriceBook>
}

export function toCustomModelPrice(price: ModelPriceDto): CustomModelPrice {
  const rates = price.usdPerMillionTokens
  return {
    id: price.id,
    model: price.model,
    match: price.match,
    effectiveFrom: price.effectiveFrom === null ? null : new Date(price.effectiveFrom),
    rates: { input: rates.input, output: rates.output, cacheRead: rates.cacheRead, cacheWrite: rates.cacheWrite, reasoning: rates.reasoning },
  }
}

/** Each project's custom prices, read from the database at most once per TTL (per writer process). */
export class ModelPriceCache {
  readonly #db: Db
  readonly #ttlMs: number
  readonly #entries = new Map<string, Entry>()
  readonly #now: () => number

  constructor(db: Db, ttlMs = MODEL_PRICE_CACHE_TTL_MS, now: () => number = Date.now) {
    this.#db = db
    this.#ttlMs = ttlMs
    this.#now = now
  }

  /** The project's prices; a failed read is not cached, so the job's retry reads again. */
  bookFor(projectId: string): Promise<CustomPriceBook> {
    const now = this.#now()
    const cached = this.#entries.get(projectId)
    if (cached !== undefined && cached.expiresAt > now) return cached.book
    const book = listModelPrices(this.#db, projectId).then((prices) => new CustomPriceBook(prices.map(toCustomModelPrice)))
    this.#entries.set(projectId, { expiresAt: now + this.#ttlMs, book })
    book.catch(() => {
      if (this.#entries.get(projectId)?.book === book) this.#entries.delete(projectId)
    })
    // Projects come and go; expired entries are dropped whenever the map has grown large.
    if (this.#entries.size > 10_000) for (const [id, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(id)
    return book
  }
}
