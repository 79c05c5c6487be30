// What bench:ingest and bench:writer run on: a database and a queue prefix of their own, and the
// services they start as child processes; close() stops and removes them all.
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { testEnvironment } from '@tracewell/config'
import { sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { QueueNames } from '@tracewell/queue'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { stopChild } from './child-processes.ts'
import { parentOf, scopeServer } from './process-stats.ts'
import { discardQueue } from './discard-queue.ts'

export interface WritePathStack {
  database: TestDatabase
  /** DATABASE_URL, REDIS_URL and QUEUE_PREFIX for the services the bench starts. */
  env: Record<string, string>
  /**
   * Ingest's: `env`, and both backlog bounds raised so that admission control does not answer 429
   * while nothing drains the queue (a 5-second run of 100-span bodies at ~80k spans/s queues
   * ~600 MB, over the default 512 MiB).
   */
  ingestEnv: Record<string, string>
  queue: Queue
  redis: Redis
  /** The bench's child processes, stopped by close(). */
  children: ChildProcess[]
  /** Empties the bench's queue (discard-queue.ts). */
  discardQueue(): Promise<void>
  close(): Promise<void>
}

export async function openWritePathStack(name: string): Promise<WritePathStack> {
  const { REDIS_URL } = testEnvironment()
  const database = await createTestDatabase()
  const prefix = `bench-${name}-${randomUUID()}`
  const queue = new Queue(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  const redis = new Redis(REDIS_URL)
  const children: ChildProcess[] = []
  await scopeServers(database, redis)
  const env = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix }
  return {
    database,
    env,
    ingestEnv: { ...env, QUEUE_MAX_BACKLOG: '2000000', QUEUE_MAX_BACKLOG_BYTES: String(4 * 1024 ** 3), ...(process.env.ENQUEUE_LINGER_MS === undefined ? {} : { ENQUEUE_LINGER_MS: process.env.ENQUEUE_LINGER_MS }) },
    queue,
    redis,
    children,
    discardQueue: () => discardQueue(queue, redis, prefix),
    async close() {
      for (const child of children) await stopChild(child)
      await discardQueue(queue, redis, prefix).catch(() => {})
      await queue.close()
      await redis.quit()
      await database.drop()
    },
  }
}

/**
 * The CPU figures count the Postgres and Redis this stack uses, not others of the machine's
 * (process-stats.ts): the postmaster is the parent of this connection's backend.
 */
async function scopeServers(database: TestDatabase, redis: Redis): Promise<void> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)
  const postmaster = parentOf(rows[0]?.pid as number)
  if (postmaster !== undefined) scopeServer('postgres', postmaster)
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1])
  if (Number.isInteger(redisPid)) scopeServer('redis-server', redisPid)
}
