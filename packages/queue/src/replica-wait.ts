import type { Cluster, Redis } from 'ioredis'
import { isCluster, type QueueRedis } from './redis-connection.ts'
import { shardSlot, type SpanBatchShard } from './span-batch.shards.ts'

/**
 * Waits until `replicas` replicas of the master of each shard hold everything this connection has
 * written to it (Redis WAIT), and throws when they did not within `timeoutMs`. WAIT counts the
 * writes of the connection it is sent on, so on a cluster it goes to each shard's master over the
 * node connection that carried the writes (ioredis keeps one per node).
 *
 * Replication stays asynchronous: WAIT does not make a write durable on a replica's disk, and a
 * write a replica did not acknowledge in time is still on the master. The caller answers 503 then,
 * and the client's retry is stored once (the spans' primary key), so at-least-once holds.
 */
export async function waitForReplicas(redis: QueueRedis, shards: readonly SpanBatchShard[], replicas: number, timeoutMs: number): Promise<void> {
  const masters = isCluster(redis) ? new Set(shards.map((shard) => masterOfSlot(redis, shardSlot(shard)))) : new Set([redis as Redis])
  await Promise.all(
    [...masters].map(async (master) => {
      const acknowledged = await master.wait(replicas, timeoutMs)
      if (acknowledged < replicas) {
        throw new Error(`${acknowledged} of ${replicas} Redis replica(s) of ${master.options.host}:${master.options.port} acknowledged the write within ${timeoutMs} ms`)
      }
    }),
  )
}

function masterOfSlot(cluster: Cluster, slot: number): Redis {
  const key = cluster.slots[slot]?.[0]
  const master = key === undefined ? undefined : cluster.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === key)
  if (!master) throw new Error(`no Redis Cluster master is known for slot ${slot}`)
  return master
}
