import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { createSpanBatchQueueConnection, isCluster, type QueueRedis, type QueueRedisTarget } from './redis-connection.ts'
import { QueueNames } from './span-batch.contract.ts'
import { shardIndexOf, spanBatchShards } from './span-batch.shards.ts'
import { verdictOf, type SpanRateLimiter } from './span-rate-limit.ts'

// bucketStep (span-rate-limit.ts) in Lua, so that the read, refill, take and write are one atomic
// step whichever ingest replica runs it. The clock is Redis's (TIME), so replicas whose clocks
// disagree still share one bucket correctly. The key expires once the bucket would be full again:
// a full bucket and no bucket are the same. The tokens go back as a string (Lua numbers become
// integers in a reply).
const TAKE_SPANS = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local spans = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
if tokens == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - tonumber(state[2])) * rate / 1000)
end
local allowed = 0
if tokens >= math.min(spans, burst) then
  tokens = math.min(burst, tokens - spans)
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return { allowed, tostring(tokens) }`

interface TakeSpansCommand {
  twTakeSpans(key: string, rate: number, burst: number, spans: number): Promise<[number, string]>
}

export interface RedisSpanRateLimiterOptions {
  /** REDIS_URL or REDIS_CLUSTER_NODES: the queue's Redis. */
  redis: QueueRedisTarget | string
  /** QUEUE_PREFIX. */
  prefix: string
  /** QUEUE_SHARDS: a project's bucket is in its shard's hash slot. */
  shards: number
}

/**
 * Project token buckets in the queue's Redis, shared by every ingest replica. On a Redis Cluster
 * each project's bucket lives under its shard's hash tag, on the master that holds its jobs.
 * A connection of its own, failing fast as the producer's does.
 */
export function createRedisSpanRateLimiter(options: RedisSpanRateLimiterOptions): SpanRateLimiter {
  const connection: QueueRedis = createSpanBatchQueueConnection(options.redis, 'producer')
  connection.on('error', () => {}) // the producer reports an unreachable Redis; refused takes are admitted (ingest's rate limiter)
  connection.defineCommand('twTakeSpans', { numberOfKeys: 1, lua: TAKE_SPANS })
  const shards = spanBatchShards({ prefix: options.prefix, count: options.shards, cluster: isCluster(connection) })
  const keyOf = (projectId: string) => spanRateLimitKeyOf(shards[shardIndexOf(projectId, shards.length)]?.prefix ?? options.prefix, projectId)
  // A request right after start waits (briefly) for the first connection instead of finding none;
  // later, an unreachable Redis fails at once.
  let firstConnect: Promise<unknown> | null = Promise.race([once(connection, 'ready'), sleep(1_000)])
    .catch(() => {}) // an 'error' first (events.once rejects on it): Redis is down, and take() says so
    .finally(() => (firstConnect = null))
  return {
    async take(projectId, spans, limit) {
      if (firstConnect !== null && connection.status !== 'ready') await firstConnect
      const [allowed, tokens] = await (connection as unknown as TakeSpansCommand).twTakeSpans(keyOf(projectId), limit.spansPerSecond, limit.burst, spans)
      return verdictOf(Number(tokens), allowed === 1, spans, limit)
    },
    async close() {
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}

/** The key of a project's bucket (for tests and operators). */
export const spanRateLimitKeyOf = (shardPrefix: string, projectId: string): string => `${shardPrefix}:${QueueNames.spanBatches}:rate:${projectId}`
