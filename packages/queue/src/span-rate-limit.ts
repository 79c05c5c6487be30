/** A project's ingest rate limit: a token bucket of `burst` spans, refilled at `spansPerSecond`. */
export interface SpanRateLimit {
  spansPerSecond: number
  burst: number
}

/** What a bucket said about one request, with what the rate-limit headers report. */
export interface SpanRateVerdict {
  allowed: boolean
  /** The bucket's size (RateLimit-Limit). */
  limit: number
  /** Whole spans left in the bucket after this request (RateLimit-Remaining). */
  remaining: number
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number
  /** When refused: seconds until a request of the same size would be taken (Retry-After, at least 1). */
  retryAfterSeconds: number
  /** Seconds until the bucket holds one whole span again; 0 when it does now. Until then any request is refused. */
  emptySeconds: number
}

/**
 * Token buckets of spans per project, shared by every ingest replica (Redis) or this process
 * alone. Taking a negative number of spans gives them back (never above `burst`).
 */
export interface SpanRateLimiter {
  take(projectId: string, spans: number, limit: SpanRateLimit): Promise<SpanRateVerdict>
  close(): Promise<void>
}

/**
 * One token-bucket step, the same arithmetic in Lua (span-rate-limit.redis.ts) and in memory:
 * refill for the time since the last request, then take the request's spans if the bucket holds
 * them. A request larger than the whole bucket is taken when the bucket is full, leaving it in
 * debt, so that a limit smaller than one batch slows a project down instead of refusing its every
 * batch for good (what GCRA-style limiters such as Envoy's and Tempo's do with an oversized request
 * is refuse it forever; an exporter would then retry the same batch without end).
 */
export function bucketStep(state: { tokens: number; at: number } | null, now: number, spans: number, limit: SpanRateLimit): { tokens: number; allowed: boolean } {
  const refilled = state === null ? limit.burst : Math.min(limit.burst, state.tokens + (Math.max(0, now - state.at) * limit.spansPerSecond) / 1000)
  const allowed = refilled >= Math.min(spans, limit.burst)
  return { tokens: allowed ? Math.min(limit.burst, refilled - spans) : refilled, allowed }
}

/** The verdict of a bucket left with `tokens` after a request of `spans`. */
export function verdictOf(tokens: number, allowed: boolean, spans: number, limit: SpanRateLimit): SpanRateVerdict {
  const wanted = Math.min(spans, limit.burst)
  return {
    allowed,
    limit: limit.burst,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((limit.burst - tokens) / limit.spansPerSecond)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((wanted - tokens) / limit.spansPerSecond)),
    emptySeconds: Math.max(0, (1 - tokens) / limit.spansPerSecond),
  }
}

/** The buckets of one process (`npm start` without Redis): what one replica alone can share. */
export function createMemorySpanRateLimiter(now: () => number = () => performance.timeOrigin + performance.now()): SpanRateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return {
    async take(projectId, spans, limit) {
      const at = now()
      const step = bucketStep(buckets.get(projectId) ?? null, at, spans, limit)
      buckets.set(projectId, { tokens: step.tokens, at })
      // A full bucket is the same as none: forget it, so the map holds only projects sending now.
      if (step.tokens >= limit.burst) buckets.delete(projectId)
      return verdictOf(step.tokens, step.allowed, spans, limit)
    },
    async close() {
      buckets.clear()
    },
  }
}
