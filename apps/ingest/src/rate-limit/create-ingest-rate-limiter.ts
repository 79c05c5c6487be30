import { defaultIngestRateLimit, type IngestConfig } from '@tracewell/config'
import type { App } from '@tracewell/http'
import { createMemorySpanRateLimiter, createRedisSpanRateLimiter, type QueueRedisTarget } from '@tracewell/queue'
import { IngestRateLimiter } from './ingest-rate-limiter.ts'
import { ProjectLimits } from './project-limits.cache.ts'

type RateLimitSettings = Pick<IngestConfig, 'INGEST_RATE_LIMIT_SPANS_PER_SECOND' | 'INGEST_RATE_LIMIT_BURST' | 'INGEST_RATE_LIMIT_REFRESH_MS' | 'QUEUE_PREFIX' | 'QUEUE_SHARDS'>

/**
 * The rate limiter of an app's trace routes: the projects' limits read from `app.db`, their
 * buckets in the queue's Redis (shared by every ingest replica), or in this process where there
 * is no Redis (`npm start`'s in-process queue). Registered before the trace routes, so it closes
 * after them.
 */
export async function createIngestRateLimiter(app: App, settings: RateLimitSettings, redis: QueueRedisTarget | undefined): Promise<IngestRateLimiter> {
  const limits = new ProjectLimits({ db: app.db, defaultLimit: defaultIngestRateLimit(settings), refreshMs: settings.INGEST_RATE_LIMIT_REFRESH_MS, logger: app.log })
  await limits.start()
  const buckets = redis ? createRedisSpanRateLimiter({ redis, prefix: settings.QUEUE_PREFIX, shards: settings.QUEUE_SHARDS }) : createMemorySpanRateLimiter()
  const limiter = new IngestRateLimiter(limits, buckets, app.log)
  app.addHook('onClose', async () => limiter.close())
  return limiter
}
