import type { StartupDependency } from '@tracewell/config'
import { Redis } from 'ioredis'

/** The Redis at `redisUrl`, as a start-up dependency: answers once PING does. */
export function redisDependency(redisUrl: string): StartupDependency {
  const url = new URL(redisUrl)
  return {
    name: 'Redis',
    address: `${url.hostname === '' ? 'localhost' : url.hostname}:${url.port === '' ? '6379' : url.port}`,
    async probe(timeoutMs) {
      // One attempt per probe: the retrying is the caller's, with its own backoff and deadline.
      const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: timeoutMs, commandTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false })
      // connect() rejects with "Connection is closed."; the 'error' event has the cause (ECONNREFUSED, …).
      let socketError: Error | undefined
      redis.on('error', (error: Error) => {
        socketError ??= error
      })
      try {
        await redis.connect()
        await redis.ping()
      } catch (error) {
        throw socketError ?? error
      } finally {
        redis.disconnect()
      }
    },
    // A wrong password or a refused command will not change by waiting.
    isPermanent: (error) => error instanceof Error && /^(NOAUTH|WRONGPASS|NOPERM|ERR)/.test(error.message),
  }
}
