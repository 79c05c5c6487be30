import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { Queue } from './bullmq-classes.ts'
import { createSpanBatchQueueConnection, isCluster, type QueueRedisTarget } from './redis-connection.ts'
import { QueueNames } from './span-batch.contract.ts'
import { spanBatchShards } from './span-batch.shards.ts'

// The writers paused through their queue, for a migration that fills new columns from the spans
// already stored (packages/db's migrationsThatPauseWriters): BullMQ's pause stops every writer
// taking a new job, whichever version it runs, while ingest keeps queueing. Each shard paused this
// way carries a marker, so that a migration run that died before resuming is undone by the next
// run, and a pause an operator made by hand is never lifted by one.

export interface WriterQueue {
  redis: QueueRedisTarget
  /** QUEUE_PREFIX. */
  prefix: string
  /** QUEUE_SHARDS. */
  shards: number
}

export interface PausedWriters {
  /** Lets the writers take jobs again, and closes the connection. */
  resume(): Promise<void>
}

const MARKER = 'paused-for-migration'

/** The shards' queues on one connection, for one short task; throws when Redis does not answer within 10 s. */
async function openShards(writerQueue: WriterQueue) {
  const connection = createSpanBatchQueueConnection(writerQueue.redis, 'producer')
  // The producer's connection fails fast rather than queueing commands: wait for it to be up.
  if (connection.status !== 'ready') {
    const ready = once(connection, 'ready')
    const timeout = sleep(10_000).then(() => Promise.reject(new Error('Redis did not answer within 10 s')))
    try {
      await Promise.race([ready, timeout])
    } catch (error) {
      connection.disconnect()
      throw error
    }
  }
  const queues = spanBatchShards({ prefix: writerQueue.prefix, count: writerQueue.shards, cluster: isCluster(connection) }).map(
    (shard) => new Queue(QueueNames.spanBatches, { connection, prefix: shard.prefix, skipVersionCheck: true }),
  )
  const markerOf = (queue: Queue) => `${queue.opts.prefix}:${QueueNames.spanBatches}:${MARKER}`
  const close = async () => {
    await Promise.all(queues.map((queue) => queue.close()))
    connection.disconnect()
  }
  return { connection, queues, markerOf, close }
}

/**
 * Pauses every shard and waits until no writer holds a job (every job taken before the pause is
 * stored or back in the queue), at most `timeoutMs`; then throws, having resumed them.
 */
export async function pauseWriters(writerQueue: WriterQueue, timeoutMs: number, onWaiting?: (activeJobs: number) => void): Promise<PausedWriters> {
  const { connection, queues, markerOf, close } = await openShards(writerQueue)
  const resume = async () => {
    try {
      for (const queue of queues) {
        await queue.resume()
        await connection.del(markerOf(queue))
      }
    } finally {
      await close()
    }
  }
  try {
    for (const queue of queues) {
      // The marker first: a run killed between the two still finds it and resumes.
      await connection.set(markerOf(queue), new Date().toISOString())
      await queue.pause()
    }
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const active = (await Promise.all(queues.map((queue) => queue.getActiveCount()))).reduce((sum, count) => sum + count, 0)
      if (active === 0) return { resume }
      if (Date.now() > deadline) throw new Error(`the writers still held ${active} job(s) after ${timeoutMs / 1000} s`)
      onWaiting?.(active)
      await sleep(500)
    }
  } catch (error) {
    await resume()
    throw error
  }
}

/** Resumes the shards a migration run paused and did not resume (it died): how many it resumed. */
export async function resumeWritersLeftPaused(writerQueue: WriterQueue): Promise<number> {
  const { connection, queues, markerOf, close } = await openShards(writerQueue)
  try {
    let resumed = 0
    for (const queue of queues) {
      if ((await connection.exists(markerOf(queue))) === 0) continue
      await queue.resume()
      await connection.del(markerOf(queue))
      resumed++
    }
    return resumed
  } finally {
    await close()
  }
}
