import type { SpanRateLimiter, SpanRateVerdict } from '@tracewell/queue'
import type { Logger } from '@tracewell/logger'
import { spanRateLimited, spanRateLimitedEarly, type SpanRateLimitedError } from '../errors.ts'
import type { ProjectLimits } from './project-limits.cache.ts'

/** The rate-limit header fields of an answer (docs/api.md#rate-limits). */
export function rateLimitHeaders(verdict: SpanRateVerdict): Record<string, string> {
  return {
    'ratelimit-limit': String(verdict.limit),
    'ratelimit-remaining': String(verdict.remaining),
    'ratelimit-reset': String(verdict.resetSeconds),
  }
}

/**
 * Per-project ingest rate limits: a request's valid spans are taken from its project's token
 * bucket before they are queued. Over the limit, the request is refused with 429, Retry-After and
 * the rate-limit headers (spanRateLimited), and nothing of it is queued. A project without a
 * limit costs a map lookup. When the buckets cannot be asked (Redis unreachable) the request is
 * let through: the queue then answers for itself, and a limit is no reason to refuse spans it
 * could take.
 */
export class IngestRateLimiter {
  readonly #limits: ProjectLimits
  readonly #buckets: SpanRateLimiter
  readonly #logger: Logger
  #lastWarning = 0
  /** Projects whose bucket this replica last saw empty, until when it stays so (it can only refill that fast). */
  readonly #empty = new Map<string, { until: number; verdict: SpanRateVerdict }>()

  constructor(limits: ProjectLimits, buckets: SpanRateLimiter, logger: Logger) {
    this.#limits = limits
    this.#buckets = buckets
    this.#logger = logger
  }

  /** The verdict of a project's bucket for `spans` (null: no limit applies); rejects with the 429 when refused. */
  async take(projectId: string, spans: number): Promise<SpanRateVerdict | null> {
    const limit = this.#limits.limitOf(projectId)
    if (limit === null) return null
    let verdict: SpanRateVerdict
    try {
      verdict = await this.#buckets.take(projectId, spans, limit)
    } catch (error) {
      if (Date.now() - this.#lastWarning > 30_000) {
        this.#lastWarning = Date.now()
        this.#logger.warn({ err: { message: (error as Error).message } }, 'could not check an ingest rate limit; requests are let through meanwhile (repeats within 30 s are not logged)')
      }
      return null
    }
    if (verdict.emptySeconds > 0) this.#empty.set(projectId, { until: Date.now() + verdict.emptySeconds * 1000, verdict })
    else this.#empty.delete(projectId)
    if (!verdict.allowed) throw spanRateLimited(projectId, spans, limit, verdict, rateLimitHeaders(verdict))
    return verdict
  }

  /**
   * The 429 of a project whose bucket this replica saw empty a moment ago and that cannot hold a
   * span yet, answered before its body is read or decoded: a limited flood then costs ingest
   * about what its requests' headers do, and other projects keep ingest's CPU. Null otherwise
   * (the bucket is asked once the body's spans are counted). Other replicas may have emptied it
   * further, and fill it only by giving back the spans of a request their queue refused, so a
   * refusal here is at worst a moment early.
   */
  refusedEarly(projectId: string): SpanRateLimitedError | null {
    const empty = this.#empty.get(projectId)
    if (empty === undefined) return null
    const now = Date.now()
    const limit = this.#limits.limitOf(projectId)
    if (now >= empty.until || limit === null) {
      this.#empty.delete(projectId)
      return null
    }
    const elapsed = (now - (empty.until - empty.verdict.emptySeconds * 1000)) / 1000
    const verdict: SpanRateVerdict = {
      ...empty.verdict,
      allowed: false,
      remaining: 0,
      resetSeconds: Math.max(1, Math.ceil(empty.verdict.resetSeconds - elapsed)),
      retryAfterSeconds: Math.max(1, Math.ceil((empty.until - now) / 1000)),
    }
    return spanRateLimitedEarly(projectId, limit, verdict, rateLimitHeaders(verdict))
  }

  /**
   * Gives back the spans of a request taken from its bucket that the queue then refused (a full
   * backlog, Redis unreachable): the client sends them again, and they must not count twice.
   * Best effort: a bucket that cannot be asked refills on its own.
   */
  async giveBack(projectId: string, spans: number): Promise<void> {
    const limit = this.#limits.limitOf(projectId)
    if (limit !== null) await this.#buckets.take(projectId, -spans, limit).catch(() => {})
  }

  async close(): Promise<void> {
    this.#limits.close()
    await this.#buckets.close()
  }
}
