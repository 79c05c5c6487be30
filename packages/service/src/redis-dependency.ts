import type { StartupDependency } from '@tracewell/config'

// ioredis is imported by the probe, not with this module: every service loads @tracewell/service,
// and the control plane and the janitor, which never talk to Redis, rested heavier for a client
// they never made (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).

/** The Redis at `redisUrl`, as a start-up dependency: answers once PING does. */
export function redisDependency(redisUrl: string): StartupDependency {
  const url = new URL(redisUrl)
  return {
    name: 'Redis',
    address: `${url.hostname === '' ? 'localhost' : url.hostname}:${url.port === '' ? '6379' : url.port}`,
    async probe(timeoutMs) {
      const { Redis } = await import('ioredis')
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
    isPermanent: isPermanentRedisError,
  }
}

/**
 * The Redis Cluster of REDIS_CLUSTER_NODES (`host:port,…`), as a start-up dependency: answers once
 * the client has the slot map from a seed node and the cluster says its state is ok (every slot
 * served), so a process does not start against a cluster that is still being formed.
 */
export function redisClusterDependency(nodes: string, password?: string): StartupDependency {
  const seeds = nodes.split(',').map((node) => ({ host: node.slice(0, node.lastIndexOf(':')), port: Number(node.slice(node.lastIndexOf(':') + 1)) }))
  return {
    name: 'Redis Cluster',
    address: nodes,
    async probe(timeoutMs) {
      const { Cluster } = await import('ioredis')
      const cluster = new Cluster(seeds, {
        lazyConnect: true,
        enableOfflineQueue: false,
        clusterRetryStrategy: () => null,
        slotsRefreshTimeout: timeoutMs,
        redisOptions: { connectTimeout: timeoutMs, commandTimeout: timeoutMs, maxRetriesPerRequest: 0, ...(password === undefined ? {} : { password }) },
      })
      let socketError: Error | undefined
      cluster.on('error', (error: Error) => {
        socketError ??= error
      })
      try {
        await cluster.connect()
        const [node] = cluster.nodes('master')
        const info = node ? await node.cluster('INFO') : ''
        if (!/^cluster_state:ok/m.test(String(info))) throw new Error('cluster_state is not ok (slots not all served yet)')
      } catch (error) {
        throw socketError ?? error
      } finally {
        cluster.disconnect()
      }
    },
    isPermanent: isPermanentRedisError,
  }
}

// A wrong password or a refused command will not change by waiting.
const isPermanentRedisError = (error: unknown): boolean => error instanceof Error && /^(NOAUTH|WRONGPASS|NOPERM|ERR)/.test(error.message)
