import { masterNodes, type QueueRedis } from './redis-connection.ts'
import { QueueNames } from './span-batch.contract.ts'
import { isStoredMarkerKey, payloadIdTime, payloadKeyPrefix } from './span-batch.payload.ts'
import type { SpanBatchShard } from './span-batch.shards.ts'

/**
 * A payload older than this whose job does not exist is an orphan. Ingest adds a job right after
 * its payload (milliseconds; a resent add comes within one reconnect), so minutes leave a wide
 * margin, while keeping an enqueue that failed from holding Redis memory for long.
 */
export const orphanPayloadAgeMs = 5 * 60_000

/**
 * Deletes the payloads no job refers to: those of a request whose job add failed (it got a 503 and
 * was resent), and those of jobs removed from the failed set after their 14 days. A payload's id
 * is its job's id (span-batch.payload.ts), so one EXISTS per old payload tells. Every shard's
 * payloads are looked for on every master (a SCAN sees only its own node's keys; on one Redis
 * that is the one server). Returns how many were deleted. Safe to run in every writer at once:
 * each step is idempotent.
 */
export async function sweepOrphanPayloads(redis: QueueRedis, shards: readonly SpanBatchShard[], now = Date.now()): Promise<number> {
  let deleted = 0
  for (const node of masterNodes(redis)) {
    for (const shard of shards) deleted += await sweepShardOnNode(redis, node, shard.prefix, now)
  }
  return deleted
}

/** Scans `node` for the shard's payloads; checks and deletes through `redis`, which routes by key. */
async function sweepShardOnNode(redis: QueueRedis, node: QueueRedis, prefix: string, now: number): Promise<number> {
  const keyPrefix = payloadKeyPrefix(prefix)
  let deleted = 0
  let cursor = '0'
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${escapeGlob(keyPrefix)}*`, 'COUNT', 1_000)
    cursor = next
    for (const key of keys) {
      if (isStoredMarkerKey(key)) continue
      const id = key.slice(keyPrefix.length)
      const createdAt = payloadIdTime(id)
      // Payloads of an older ingest have random ids: their TTL reclaims them.
      if (createdAt === null || now - createdAt < orphanPayloadAgeMs) continue
      if (await redis.exists(`${prefix}:${QueueNames.spanBatches}:${id}`)) continue
      deleted += await redis.del(key)
    }
  } while (cursor !== '0')
  return deleted
}

/** A key prefix as a SCAN pattern that matches it literally. */
const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&')
