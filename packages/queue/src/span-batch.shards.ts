import { createRequire } from 'node:module'

/**
 * The Redis Cluster hash slot (0–16383) of a key, honouring a `{hash tag}`: cluster-key-slot, the
 * CRC16 ioredis itself routes with (a CommonJS module without type declarations).
 */
const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number

// The span queue is QUEUE_SHARDS BullMQ queues ("shards"), as a Kafka topic is partitions: a
// project's requests always go to the same shard (its id hashed), writers consume every shard,
// and one project's backlog stands in front of the projects of its own shard only.
//
// BullMQ's Lua scripts touch several keys of a queue at once, which a Redis Cluster allows only
// within one hash slot: per BullMQ's Redis Cluster guide each shard's prefix is a hash tag, and
// its payloads and markers live under the same prefix (span-batch.payload.ts), so one shard is one
// slot. Each shard's tag is picked so that its slot is in the middle of the shard's share of the
// 16384 slots: a cluster whose masters hold equal slot ranges (what `redis-cli --cluster create`
// and rebalancing make) has its shards spread evenly over its masters.

export const clusterSlots = 16_384

/** One of the span queue's BullMQ queues: its index and its BullMQ key prefix. */
export interface SpanBatchShard {
  index: number
  /** The BullMQ `prefix` option of this shard's queue and the start of every key it owns. */
  prefix: string
}

export interface SpanBatchShardLayout {
  /** QUEUE_PREFIX. */
  prefix: string
  /** QUEUE_SHARDS. */
  count: number
  /** Whether the queue is on a Redis Cluster (hash tags are then required even for one shard). */
  cluster: boolean
}

/**
 * The shards of a layout. One shard on one Redis keeps the layout of releases before sharding
 * (`<QUEUE_PREFIX>:span-batches:…`, no tag), so jobs queued by them are still drained; every other
 * layout tags each shard: `{<QUEUE_PREFIX>-<index>[-<salt>]}:span-batches:…`. Changing QUEUE_SHARDS
 * changes the tags: drain the queue first (docs/operations.md#redis-cluster).
 */
export function spanBatchShards(layout: SpanBatchShardLayout): SpanBatchShard[] {
  if (layout.count === 1 && !layout.cluster) return [{ index: 0, prefix: layout.prefix }]
  return Array.from({ length: layout.count }, (_, index) => ({ index, prefix: `{${shardTag(layout.prefix, index, layout.count)}}` }))
}

/** The shard that holds a project's jobs. */
export function shardIndexOf(projectId: string, count: number): number {
  // CRC16 of the id (the slot function), so the mapping is stable across processes and releases.
  return count === 1 ? 0 : calculateSlot(projectId) % count
}

/** The hash slot every key of a shard is in. */
export const shardSlot = (shard: SpanBatchShard): number => calculateSlot(`${shard.prefix}:`)

/**
 * The hash tag of shard `index` of `count`: `<prefix>-<index>`, with the smallest salt that puts
 * it within a sixteenth of the shard's share of slots around the share's middle (a few hundred
 * tries at most).
 */
function shardTag(prefix: string, index: number, count: number): string {
  const share = clusterSlots / count
  const middle = share * (index + 0.5)
  const tolerance = Math.max(1, share / 16)
  for (let salt = 0; ; salt++) {
    const tag = salt === 0 ? `${prefix}-${index}` : `${prefix}-${index}-${salt}`
    if (Math.abs(calculateSlot(tag) - middle) <= tolerance) return tag
  }
}
