/** A token bucket's rate and size, in spans. */
export interface IngestRateLimitValues {
  spansPerSecond: number
  burst: number
}

/** The default limit of every project from the settings; null when there is none (the rate is 0). */
export function defaultIngestRateLimit(settings: { INGEST_RATE_LIMIT_SPANS_PER_SECOND: number; INGEST_RATE_LIMIT_BURST: number }): IngestRateLimitValues | null {
  const spansPerSecond = settings.INGEST_RATE_LIMIT_SPANS_PER_SECOND
  if (spansPerSecond === 0) return null
  return { spansPerSecond, burst: settings.INGEST_RATE_LIMIT_BURST === 0 ? 2 * spansPerSecond : settings.INGEST_RATE_LIMIT_BURST }
}
