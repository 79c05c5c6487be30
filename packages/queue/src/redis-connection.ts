import { hostname } from 'node:os'
import { Redis, type RedisOptions } from 'ioredis'

/**
 * The name a queue connection gives itself in Redis's CLIENT LIST: its role, host and process, so
 * an operator can tell whose connection it is, and a test that kills its own connections by name
 * leaves those of every other process on the same Redis alone.
 */
export function spanBatchConnectionName(role: 'producer' | 'writer'): string {
  return `tracewell-${role}:${hostname()}:${process.pid}`
}

/**
 * A Redis connection for the span-batch queue, configured per BullMQ's going-to-production guide:
 * - producer (ingest): fail fast. With no offline queue a command sent while Redis is unreachable
 *   is rejected at once, and a command timeout bounds the case where Redis accepts the connection
 *   but does not answer; the HTTP request then gets its 503 instead of hanging.
 * - worker (writer): never give up. `maxRetriesPerRequest: null` is what BullMQ requires for the
 *   blocking connection; commands wait for Redis to come back instead of failing a job.
 * Both reconnect forever, with a short capped delay, so service resumes on its own.
 */
export function createSpanBatchQueueConnection(redisUrl: string, role: 'producer' | 'worker'): Redis {
  const common: RedisOptions = {
    // Reconnect quickly at first, then every 2 s at most, forever.
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
    connectTimeout: 2_000,
  }
  const options: RedisOptions =
    role === 'producer'
      ? { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 5_000, connectionName: spanBatchConnectionName('producer') }
      : { ...common, enableOfflineQueue: true, maxRetriesPerRequest: null, connectionName: spanBatchConnectionName('writer') }
  return new Redis(redisUrl, options)
}
