import { Queue, UnrecoverableError, Worker, type Job } from './bullmq-classes.ts'
import type { Logger } from '@tracewell/logger'
import { addJobTurns, endTurn, priorityOfTurn } from './project-turns.ts'
import { createSpanBatchQueueConnection, isCluster, type QueueRedis, type QueueRedisTarget } from './redis-connection.ts'
import { repeatedErrorLog } from './repeated-error.log.ts'

// A job queue whose jobs are rows of a project (a judgment, an experiment item): the row's id is
// the job's id (adding one twice adds nothing), retried with exponential backoff, at most
// `concurrency` running at once, shared between projects as the span queue is (project-turns.ts):
// a project's first unfinished job is added to BullMQ's wait list, its n-th with priority n − 1,
// so a project's n-th job waits behind every other project's first, never behind a backlog.
// BullMQ on one Redis or a Redis Cluster; without Redis (`npm start`), the same contract in
// process (in-process-project-job.queue.ts).

/** A job to queue: the id of its row, and the project the row belongs to. */
export interface ProjectJob {
  jobId: string
  projectId: string
}

/** What a job carries in Redis. `projectId` is absent on jobs queued by releases before it (additive). */
export interface ProjectJobData {
  jobId: string
  projectId?: string
}

/** Runs one job; `final` when no retry is left after this attempt. */
export type ProjectJobProcessor = (jobId: string, final: boolean) => Promise<unknown>

export interface ProjectJobQueueOptions {
  /** The BullMQ queue's name (also the start of its keys under the prefix). */
  name: string
  /** What one job is called in the logs. */
  jobKind: string
  /** Jobs run at once by this process, over every project. */
  concurrency: number
  maxAttempts: number
  /** The first retry's delay, doubled for each later one. */
  backoffMs: number
  process: ProjectJobProcessor
  /** An error no retry can help: the job fails at once. */
  isPermanent?: (error: unknown) => boolean
  logger: Logger
  /**
   * How long a job is locked to its worker without renewal (BullMQ renews it every half of this
   * while the call runs, however long it takes): a killed worker's job is redone after it (default 10 s).
   */
  lockDurationMs?: number
  /** How often jobs whose lock lapsed are moved back to waiting (default 5 s). */
  stalledIntervalMs?: number
}

export interface ProjectJobQueue {
  /** Queues these jobs (ids already queued are left as they are). */
  add(jobs: readonly ProjectJob[]): Promise<void>
  /** Whether the queue takes jobs now (for /readyz). */
  ping(): Promise<void>
  /** Stops taking jobs and lets the running ones finish. */
  close(): Promise<void>
}

/**
 * The key prefix of a job queue: QUEUE_PREFIX on one Redis (the keys of releases before the kit,
 * so jobs they queued still run), a hash tag of its own on a cluster (BullMQ's scripts touch
 * several keys of a queue, which a cluster allows within one slot only). A job queue is one slot
 * whatever QUEUE_SHARDS says: its jobs are model calls, tens a second at most, and one queue
 * keeps both the concurrency total and the turns exact over every project.
 */
export const projectJobQueuePrefix = (prefix: string, name: string, cluster: boolean): string => (cluster ? `{${prefix}-${name}}` : prefix)

// Completed jobs are kept an hour (a job re-added meanwhile is not run twice; its row is the
// record anyway), failed ones a day.
const removeOnComplete = { age: 3600 }
const removeOnFail = { age: 24 * 3600 }

/** Jobs counted and added per round trip. */
const addChunk = 500

/** How long a process that just started waits for its first connection before `add` and `ping` fail. */
const firstConnectMs = 1_000
const firstConnectClusterMs = 3_000

export function createBullMqProjectJobQueue(options: ProjectJobQueueOptions & { redis: QueueRedisTarget | string; prefix: string; connectionName?: string }): ProjectJobQueue {
  const connectionName = options.connectionName ?? `tracewell-${options.name}`
  // The producer side fails fast (the scheduler tries again on its next look; the rows wait in
  // Postgres); the worker waits for Redis as long as it takes (redis-connection.ts).
  const producer = createSpanBatchQueueConnection(options.redis, 'producer', { connectionName })
  const workerConnection = createSpanBatchQueueConnection(options.redis, 'worker', { connectionName })
  const reportError = repeatedErrorLog(
    { warn: (obj, msg) => options.logger.error(obj, msg) },
    `${options.name} queue error (repeats within 30 s are counted, not logged)`,
  )
  producer.on('error', reportError)
  workerConnection.on('error', reportError)
  const assertConnected = readiness(producer)
  const prefix = projectJobQueuePrefix(options.prefix, options.name, isCluster(producer))
  const queue = new Queue<ProjectJobData>(options.name, { connection: producer, prefix, skipWaitingForReady: true, skipVersionCheck: true })
  queue.on('error', reportError)
  const isPermanent = options.isPermanent ?? (() => false)

  const worker = new Worker<ProjectJobData>(
    options.name,
    async (job) => {
      const final = job.attemptsMade + 1 >= options.maxAttempts
      try {
        return await options.process(job.data.jobId, final)
      } catch (error) {
        throw isPermanent(error) ? new UnrecoverableError(error instanceof Error ? error.message : String(error)) : error
      }
    },
    {
      connection: workerConnection,
      prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs ?? 10_000,
      stalledInterval: options.stalledIntervalMs ?? 5_000,
      // A job may lose its worker a few times (rolling restarts) before it is failed; its row is
      // then queued again by the scheduler's look for stale pending rows.
      maxStalledCount: 3,
      removeOnComplete,
      removeOnFail,
    },
  )
  // The project's later jobs move up once this one is done; a job without its projectId was
  // queued by an older release and was never counted.
  const finishTurn = (job: Job<ProjectJobData>) => {
    if (job.data.projectId === undefined) return
    endTurn(workerConnection, prefix, job.data.projectId, options.name).catch((error: Error) => {
      options.logger.warn({ jobId: job.data.jobId, err: { message: error.message } }, "could not count a project's finished job; its counter expires on its own")
    })
  }
  worker.on('completed', finishTurn)
  worker.on('failed', (job, error) => {
    if (job === undefined) return
    const final = error instanceof UnrecoverableError || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)
    if (final) finishTurn(job)
    options.logger.warn({ jobId: job.data.jobId, projectId: job.data.projectId, attempt: job.attemptsMade, final, err: error }, `${options.jobKind} failed`)
  })
  worker.on('error', reportError)

  return {
    async add(jobs) {
      if (jobs.length === 0) return
      await assertConnected()
      // In chunks: a run starts up to 10,000 judgments at once, and each chunk's script and
      // addBulk hold Redis for a moment only.
      for (let start = 0; start < jobs.length; start += addChunk) {
        const chunk = jobs.slice(start, start + addChunk)
        const turns = await addJobTurns(producer, prefix, options.name, chunk)
        const fresh = chunk.flatMap((job, i) => {
          const turn = turns[i] ?? 0
          if (turn === 0) return []
          const priority = priorityOfTurn(turn)
          const data: ProjectJobData = { jobId: job.jobId, projectId: job.projectId }
          const opts = { jobId: job.jobId, attempts: options.maxAttempts, backoff: { type: 'exponential', delay: options.backoffMs }, removeOnComplete, removeOnFail }
          return [{ name: options.jobKind, data, opts: priority === undefined ? opts : { ...opts, priority } }]
        })
        if (fresh.length > 0) await queue.addBulk(fresh)
      }
    },
    async ping() {
      await assertConnected()
      // Ready only when the master that owns the queue's slot takes a write now.
      await producer.set(`${prefix}:${options.name}:ready-probe`, String(Date.now()), 'PX', 60_000)
    },
    async close() {
      await worker.close()
      await queue.close()
      await Promise.all([producer, workerConnection].map((redis) => redis.quit().catch(() => redis.disconnect())))
    },
  }
}

/**
 * Fails at once unless the connection is ready, waiting only while its very first attempt to
 * connect is under way (a process that just started is not "down"), as the span producer does.
 */
function readiness(redis: QueueRedis): () => Promise<void> {
  let settled = false
  const firstConnect = new Promise<void>((resolve) => {
    redis.once('ready', resolve)
    redis.once('error', () => resolve())
    setTimeout(resolve, isCluster(redis) ? firstConnectClusterMs : firstConnectMs).unref()
  }).then(() => void (settled = true))
  return async () => {
    if (redis.status !== 'ready' && !settled) await firstConnect
    if (redis.status !== 'ready') throw new Error(`queue Redis is not connected (${redis.status})`)
  }
}
