import type { Cluster, Redis } from 'ioredis'
import { isCluster, type QueueRedis } from './redis-connection.ts'
import { QueueNames } from './span-batch.contract.ts'
import { shardSlot, type SpanBatchShard } from './span-batch.shards.ts'

/**
 * Waits until `replicas` replicas of the shard's master hold everything this connection has
 * written to it (Redis WAIT), and throws when they did not within `timeoutMs`. WAIT counts the
 * writes of the connection it is sent on, so on a cluster it goes to the shard's master over the
 * node connection that carried the writes (ioredis keeps one per node). One shard at a time: a
 * master without its replicas fails its own shards' requests only.
 *
 * Replication stays asynchronous: WAIT does not make a write durable on a replica's disk, and a
 * write a replica did not acknowledge in time is still on the master. The caller answers 503 then,
 * and the client's retry is stored once (the spans' primary key), so at-least-once holds.
 */
export async function waitForReplicas(redis: QueueRedis, shard: SpanBatchShard, replicas: number, timeoutMs: number): Promise<void> {
  const master = isCluster(redis) ? masterOfSlot(redis, shardSlot(shard)) : (redis as Redis)
  const acknowledged = await master.wait(replicas, timeoutMs)
  if (acknowledged < replicas) {
    throw new Error(`${acknowledged} of ${replicas} Redis replica(s) of ${master.options.host}:${master.options.port} acknowledged the write within ${timeoutMs} ms`)
  }
}

/**
 * Writes a short-lived key in the shard's slot and, with `replicas`, waits for them: whether a
 * request to this shard would be acknowledged now.
 */
export async function probeShard(redis: QueueRedis, shard: SpanBatchShard, replicas: number, timeoutMs: number): Promise<void> {
  await redis.set(`${shard.prefix}:${QueueNames.spanBatches}:ready-probe`, String(Date.now()), 'PX', 60_000)
  if (replicas > 0) await waitForReplicas(redis, shard, replicas, timeoutMs)
}

/**
 * How long a probe waits for the replicas: QUEUE_REPLICA_TIMEOUT_MS, but at most 1 s, so that a
 * probe (and /readyz, whose checks have 2 s) ends in time; a replica in sync answers in milliseconds.
 */
export const probeWaitMs = (replicaTimeoutMs: number): number => Math.min(replicaTimeoutMs, 1_000)

/** host:port of the master that holds the shard's slot, as the client knows it (one name on a single Redis). */
export function masterNameOf(redis: QueueRedis, shard: SpanBatchShard): string {
  return isCluster(redis) ? (redis.slots[shardSlot(shard)]?.[0] ?? 'unknown') : 'redis'
}

function masterOfSlot(cluster: Cluster, slot: number): Redis {
  const key = cluster.slots[slot]?.[0]
  const master = key === undefined ? undefined : cluster.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === key)
  if (!master) throw new Error(`no Redis Cluster master is known for slot ${slot}`)
  return master
}
