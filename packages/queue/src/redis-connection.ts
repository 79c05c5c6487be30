import { hostname } from 'node:os'
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import './cluster-refresh-stop.ts'

/** A connection to the queue's Redis: one server, or a Redis Cluster through ioredis's cluster client. */
export type QueueRedis = Redis | Cluster

/** Where the queue lives: REDIS_URL, or the seed nodes of REDIS_CLUSTER_NODES. */
export type QueueRedisTarget = { url: string } | { clusterNodes: ReadonlyArray<{ host: string; port: number }>; password?: string | undefined }

/**
 * The queue's Redis from the settings (exactly one of the two is set where a queue is required;
 * packages/config checks that), or undefined where neither is (`npm start`'s in-process queue).
 */
export function queueRedisTargetOf(settings: {
  REDIS_URL?: string | undefined
  REDIS_CLUSTER_NODES?: string | undefined
  REDIS_CLUSTER_PASSWORD?: string | undefined
}): QueueRedisTarget | undefined {
  if (settings.REDIS_CLUSTER_NODES) {
    return {
      clusterNodes: settings.REDIS_CLUSTER_NODES.split(',').map((node) => {
        const at = node.lastIndexOf(':')
        return { host: node.slice(0, at), port: Number(node.slice(at + 1)) }
      }),
      password: settings.REDIS_CLUSTER_PASSWORD,
    }
  }
  return settings.REDIS_URL ? { url: settings.REDIS_URL } : undefined
}

/** How a target reads in logs and errors. */
export const describeQueueRedisTarget = (target: QueueRedisTarget): string =>
  'url' in target ? target.url : `Redis Cluster ${target.clusterNodes.map(({ host, port }) => `${host}:${port}`).join(',')}`

export const isCluster = (redis: QueueRedis): redis is Cluster => (redis as Cluster).isCluster === true

/** The servers that hold keys: every master of a cluster (a SCAN sees only its own node), or the one server. */
export const masterNodes = (redis: QueueRedis): Redis[] => (isCluster(redis) ? redis.nodes('master') : [redis])

/**
 * The name a queue connection gives itself in Redis's CLIENT LIST: its role, host and process, so
 * an operator can tell whose connection it is, and a test that kills its own connections by name
 * leaves those of every other process on the same Redis alone.
 */
export function spanBatchConnectionName(role: 'producer' | 'writer'): string {
  return `tracewell-${role}:${hostname()}:${process.pid}`
}

// Reconnect quickly at first, then every 2 s at most, forever.
const reconnectDelay = (times: number) => Math.min(100 * 2 ** Math.min(times, 5), 2_000)

/**
 * A Redis connection for the span-batch queue, configured per BullMQ's going-to-production guide:
 * - producer (ingest): fail fast. With no offline queue a command sent while Redis is unreachable
 *   is rejected at once, and a command timeout bounds the case where Redis accepts the connection
 *   but does not answer; the HTTP request then gets its 503 instead of hanging.
 * - worker (writer): never give up. `maxRetriesPerRequest: null` is what BullMQ requires for the
 *   blocking connection; commands wait for Redis to come back instead of failing a job.
 * Both reconnect forever, with a short capped delay, so service resumes on its own. On a cluster
 * the same options apply per node, and ioredis follows MOVED/ASK redirects and refreshes its slot
 * map after a failover; the delays below make it retry a command for about as long as a failover
 * takes instead of failing it at the first CLUSTERDOWN.
 *
 * `connectionName`: another queue's connections say whose they are (default: the span queue's).
 * `autoPipelining`: commands issued in the same turn of the event loop go to Redis in one write
 * (ioredis's auto-pipelining), for a connection of independent commands only (never BullMQ's).
 */
export function createSpanBatchQueueConnection(
  target: QueueRedisTarget | string,
  role: 'producer' | 'worker',
  { autoPipelining = false, connectionName }: { autoPipelining?: boolean; connectionName?: string } = {},
): QueueRedis {
  const common: RedisOptions = { connectTimeout: 2_000 }
  const perNode: RedisOptions =
    role === 'producer'
      ? { ...common, maxRetriesPerRequest: 1, commandTimeout: 5_000, connectionName: connectionName ?? spanBatchConnectionName('producer') }
      : { ...common, maxRetriesPerRequest: null, connectionName: connectionName ?? spanBatchConnectionName('writer') }
  const offlineQueue = role !== 'producer'
  const resolved = typeof target === 'string' ? { url: target } : target
  if ('url' in resolved) return new Redis(resolved.url, { ...perNode, retryStrategy: reconnectDelay, enableOfflineQueue: offlineQueue, enableAutoPipelining: autoPipelining })
  const options: ClusterOptions = {
    redisOptions: resolved.password === undefined ? perNode : { ...perNode, password: resolved.password },
    clusterRetryStrategy: reconnectDelay,
    enableOfflineQueue: offlineQueue,
    enableAutoPipelining: autoPipelining,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    // A killed master's slots move to its replica within cluster-node-timeout; the client learns
    // the new map from the MOVED replies and from this refresh.
    slotsRefreshInterval: 2_000,
  }
  return new Cluster(resolved.clusterNodes.map(({ host, port }) => ({ host, port })), options)
}
