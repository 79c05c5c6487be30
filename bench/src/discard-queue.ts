import type { Queue } from 'bullmq'
import type { Redis } from 'ioredis'

/**
 * Deletes everything under the benchmark's own queue prefix: BullMQ's keys, and the payload lists
 * ingest writes beside its jobs (`<prefix>:span-batches:payload:*`), which `obliterate` does not
 * know about. Without the second part every run would leave its request bodies in Redis for
 * their 30-day TTL: gigabytes after a few runs, and a machine short of memory for the next one.
 */
export async function discardQueue(queue: Queue, redis: Redis, prefix: string): Promise<void> {
  await queue.obliterate({ force: true })
  for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
    if (keys.length > 0) await redis.unlink(...keys)
  }
}
