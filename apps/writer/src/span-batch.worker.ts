import type { Db } from '@tracewell/db'
import {
  createSpanBatchQueueConnection,
  deletePayload,
  endTurn,
  isLightTurn,
  isCluster,
  masterNodes,
  probeShard,
  probeWaitMs,
  ShardWritability,
  spanBatchConnectionName,
  repeatedErrorLog,
  QueueNames,
  spanBatchShards,
  bodyBytesOf,
  spanCountOf,
  sweepOrphanPayloads,
  withJobBodies,
  UnrecoverableError,
  Worker,
  type Job,
  type QueueRedis,
  type QueueRedisTarget,
  type SpanBatchJob,
  type UnwritableShard,
} from '@tracewell/queue'
import { Registry } from 'prom-client'
import { BodyBudget } from './body-budget.ts'
import { spanBatchMetrics, unwritableShardMetrics } from './span-batch.metrics.ts'
import { spanSourcesOf } from './queued-bodies.decoder.ts'
import { CopyCombiner, storeSpans, type CopyLane } from '@tracewell/write-path'
import { jobFailure, type SpanBatchResult } from './span-batch.processor.ts'
import type { Logger } from '@tracewell/logger'
import { SpanPricer } from './span-pricer.ts'

export interface SpanBatchWorkerOptions {
  db: Db
  /** REDIS_URL (a string or `{ url }`) or the seed nodes of REDIS_CLUSTER_NODES. */
  redis: QueueRedisTarget | string
  /** QUEUE_PREFIX. */
  prefix: string
  /** QUEUE_SHARDS: every shard is consumed (default 1). */
  shards?: number
  /**
   * QUEUE_REPLICA_ACKS and QUEUE_REPLICA_TIMEOUT_MS, as ingest has them: a shard whose master
   * lacks these replicas cannot take ingest's writes, which /readyz and the metrics say.
   */
  replicaAcks?: number
  replicaTimeoutMs?: number
  /**
   * Jobs stored at once by this process (WRITER_CONCURRENCY), spread over the shards: each
   * shard's worker takes ceil(concurrency / shards), at least one, so every shard is drained.
   */
  concurrency: number
  /**
   * Request-body bytes of the jobs in hand, at most (WRITER_MAX_BODY_BYTES, default 8 MiB): many
   * small jobs at once, few large ones (body-budget.ts).
   */
  maxBodyBytes?: number
  /**
   * How long a job ready for a COPY waits for others to share it (WRITER_LINGER_MS, default 0
   * here), unless LINGER_UNTIL_SPANS or every job one shard's worker may hold wait already.
   */
  lingerMs?: number
  /**
   * Tries per job before it goes to the failed set (WRITER_MAX_ATTEMPTS). Jobs carry their own
   * `attempts` (12, see defaultSpanBatchJobOptions); this caps it, it cannot raise it.
   */
  maxAttempts?: number
  /**
   * How long a job is locked to this worker without renewal (BullMQ renews it every half of
   * this); a killed worker's job is redone after it (default 8 s).
   */
  lockDurationMs?: number
  /** How often stalled jobs (lock expired) are moved back to waiting (default 2 s). */
  stalledIntervalMs?: number
  /** How often request bodies that no job refers to are looked for and deleted (default 60 s). */
  orphanSweepIntervalMs?: number
  logger: Logger
  metrics?: Registry
}

export interface SpanBatchWorker {
  /** One BullMQ worker per shard of the queue. */
  workers: Array<Worker<SpanBatchJob, SpanBatchResult>>
  /** Whether every master holding the queue answers (for /readyz). */
  ping(): Promise<void>
  /** The shards ingest cannot write to now (each probed), for /readyz's details and the metrics. */
  unwritableShards(): Promise<UnwritableShard[]>
  /** Stops taking jobs, lets the active ones finish, then closes the Redis connection. */
  close(): Promise<void>
}

const isUnrecoverable = (error: Error) => error instanceof UnrecoverableError || error.name === 'UnrecoverableError'

/**
 * Drains the span-batch queue into Postgres.
 *
 * Nothing is dropped while Postgres is down: a failed insert throws, BullMQ moves the job to
 * `delayed` with exponential backoff (1 s, 2 s, 4 s … 1024 s: about 34 minutes over the 12
 * attempts jobs are added with) and it is redone when Postgres is back. Only a job that fails
 * every attempt, or is malformed, reaches the failed set, from where `npm run queue:replay`
 * puts it back.
 *
 * A writer killed mid-job loses nothing either: its lock lapses after `lockDurationMs`, the
 * stalled check (every `stalledIntervalMs`, in any writer) moves the job back to waiting, and the
 * idempotent insert makes the redo harmless.
 *
 * Jobs carry their request bodies by reference (versions 2 and 3): they are read from Redis once a
 * try and decoded here; the bodies are deleted only once BullMQ has recorded the job as completed,
 * so every retry, redo or replay before that still finds them.
 */
export function startSpanBatchWorker(options: SpanBatchWorkerOptions): SpanBatchWorker {
  const registry = options.metrics ?? new Registry()
  const metrics = spanBatchMetrics(registry)
  const pricer = new SpanPricer({ db: options.db, metrics: registry, logger: options.logger })
  const connection = createSpanBatchQueueConnection(options.redis, 'worker')
  connection.on('error', () => {}) // reported by the workers' 'error' listener below
  // Payload reads and deletes on a connection of their own, beside BullMQ's. Auto-pipelined: the jobs
  // of one combined COPY complete together, and their deletes and turn counts go in one write.
  const payloads = createSpanBatchQueueConnection(options.redis, 'worker', { autoPipelining: true })
  payloads.on('error', () => {})
  const shards = spanBatchShards({ prefix: options.prefix, count: options.shards ?? 1, cluster: isCluster(connection) })
  // Shards are probed as ingest writes (a key in the shard's slot, then WAIT for its replicas) on
  // a fail-fast connection of their own: the workers' connections wait for Redis forever.
  const probes = createSpanBatchQueueConnection(options.redis, 'producer', { connectionName: `${spanBatchConnectionName('writer')}:probe` })
  probes.on('error', () => {})
  const writability = new ShardWritability({
    shards,
    probe: (shard) => probeShard(probes, shard, options.replicaAcks ?? 0, probeWaitMs(options.replicaTimeoutMs ?? 1_000)),
    probeIntervalMs: 500,
    probeTimeoutMs: probeWaitMs(options.replicaTimeoutMs ?? 1_000) + 500,
  })
  const unwritableShards = async () => {
    await writability.probeWritable()
    return writability.unwritable()
  }
  unwritableShardMetrics(registry, unwritableShards)
  const perShardConcurrency = Math.max(1, Math.ceil(options.concurrency / shards.length))
  const combiner = new CopyCombiner(options.db, {
    maxSpans: COMBINED_COPY_MAX_SPANS,
    maxInFlight: 2,
    maxOpenMs: COMBINED_COPY_MAX_OPEN_MS,
    lingerMs: options.lingerMs ?? 0,
    lingerUntilSpans: LINGER_UNTIL_SPANS,
    // A shard's worker holds this many jobs at most: once they all wait, its next one cannot come
    // until a COPY ends, however idle the other shards are.
    lingerUntilJobs: perShardConcurrency,
    // Jobs waiting for body bytes the lingering ones hold cannot join before a COPY ends either.
    lingerHeldBack: () => budget.blocked,
  })
  const budget = new BodyBudget(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, () => combiner.reconsider())
  // Every shard's worker reports through one throttle: Redis down (or refusing every command) is
  // one line per 30 s, not one per command per shard.
  const reportWorkerError = repeatedErrorLog(options.logger, 'span-batch worker error (repeats within 30 s are counted, not logged)')

  const workers = shards.map((shard) => createShardWorker(shard.prefix))
  function createShardWorker(prefix: string): Worker<SpanBatchJob, SpanBatchResult> {
    const worker = new Worker<SpanBatchJob, SpanBatchResult>(
      QueueNames.spanBatches,
      async (job: Job<SpanBatchJob, SpanBatchResult>) => {
        const lane = laneOf(job)
        const giveBack = await budget.take(bodyBytesOf(job.data), lane === 'express')
        const stopTimer = metrics.batchDuration.startTimer()
        try {
          const result = await storeJob(options.db, payloads, job, pricer, combiner, { lane, holder: prefix })
          metrics.spansWritten.inc(result.inserted)
          metrics.spansDuplicate.inc(result.duplicates)
          return result
        } catch (error) {
          // attemptsMade counts finished attempts, so this one is number attemptsMade + 1.
          if (options.maxAttempts !== undefined && !isUnrecoverable(error as Error) && job.attemptsMade + 1 >= options.maxAttempts) {
            throw new UnrecoverableError(`gave up after ${options.maxAttempts} attempt(s): ${(error as Error).message}`)
          }
          throw error
        } finally {
          stopTimer()
          giveBack()
        }
      },
      {
        connection,
        prefix,
        concurrency: perShardConcurrency,
        lockDuration: options.lockDurationMs ?? 8_000,
        stalledInterval: options.stalledIntervalMs ?? 2_000,
        // A job may be orphaned by a killed writer a few times (e.g. repeated rolling restarts)
        // before it is parked in the failed set.
        maxStalledCount: 3,
        // Fallbacks for jobs added without the shared default options.
        removeOnComplete: { count: 1_000 },
        removeOnFail: { count: 10_000, age: 14 * 24 * 3600 },
      },
    )

    // The project's later jobs move up once this one is done (project-turns.ts); a job without
    // its projectId was queued by an older ingest and was never counted.
    const finishTurn = (job: Job<SpanBatchJob, SpanBatchResult>) => {
      const projectId = job.data.version === 3 ? job.data.projectId : undefined
      if (projectId === undefined) return
      endTurn(payloads, prefix, projectId).catch((error: Error) => {
        options.logger.warn({ jobId: job.id, err: { message: error.message } }, "could not count a project's finished job; its counter expires on its own")
      })
    }
    worker.on('completed', (job) => {
      finishTurn(job)
      deletePayload(payloads, job.data).catch((error: Error) => {
        // Left for its TTL to reclaim; the spans are stored either way.
        options.logger.warn({ jobId: job.id, err: { message: error.message } }, 'could not delete a completed span batch payload')
      })
    })
    worker.on('failed', (job, error) => {
      const final = !job || isUnrecoverable(error) || job.attemptsMade >= (job.opts.attempts ?? 1)
      if (final && job) finishTurn(job)
      metrics.jobsFailed.inc({ outcome: final ? 'failed' : 'retrying' })
      const context = {
        jobId: job?.id,
        attemptsMade: job?.attemptsMade,
        err: { message: error.message },
      }
      if (final) options.logger.error(context, 'span batch moved to the failed set; replay it with `npm run queue:replay`')
      else options.logger.warn(context, 'span batch not stored; it will be retried')
    })
    worker.on('error', reportWorkerError)
    return worker
  }

  // Bodies whose job add failed would otherwise hold Redis memory until their 30-day TTL.
  let sweeping: Promise<void> | undefined
  const sweep = () => {
    sweeping ??= sweepOrphanPayloads(payloads, shards)
      .then((deleted) => {
        metrics.orphanPayloadsDeleted.inc(deleted)
        if (deleted > 0) options.logger.info({ deleted }, 'deleted request bodies that no queue job refers to')
      })
      .catch((error: Error) => options.logger.warn({ err: { message: error.message } }, 'could not sweep orphan payloads'))
      .finally(() => (sweeping = undefined))
  }
  const sweepTimer = setInterval(sweep, options.orphanSweepIntervalMs ?? 60_000)
  sweepTimer.unref()

  let closing: Promise<void> | undefined
  return {
    workers,
    async ping() {
      await Promise.all(masterNodes(connection).map((node) => node.ping()))
    },
    unwritableShards,
    close() {
      closing ??= (async () => {
        clearInterval(sweepTimer)
        writability.close()
        await Promise.all(workers.map((worker) => worker.close()))
        await sweeping
        await Promise.all([connection, payloads, probes].map((redis) => redis.quit().catch(() => redis.disconnect())))
      })()
      return closing
    },
  }
}

/**
 * A job on one of its project's first few turns (project-turns.ts: a project with little else
 * unfinished) goes in the combiner's express lane, so it is stored beside a flooding project's
 * COPYs instead of behind them.
 */
const laneOf = (job: Job<SpanBatchJob, SpanBatchResult>): CopyLane =>
  job.data.version === 3 && job.data.projectId !== undefined && isLightTurn(job.opts.priority) ? 'express' : 'usual'

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024

// Bounds a combined COPY's work (and its transaction's length); a job larger than this (up to
// ENQUEUE_MAX_SPANS_PER_JOB, a larger request) goes in a COPY of its own.
const COMBINED_COPY_MAX_SPANS = 5_000
// And bounds its time: the COPY takes no further job once open this long, so that with the
// encoding of the job it is on and Postgres's applying the last rows it stays well within the
// second every statement of the write path must keep to (docs/benchmarks.md, 2026-12-01).
const COMBINED_COPY_MAX_OPEN_MS = 400
// A COPY of this many spans goes without lingering: its statement, transaction and summary delta
// are shared enough, and large jobs (a few fill WRITER_MAX_BODY_BYTES) need not wait for company.
const LINGER_UNTIL_SPANS = 1_000

/**
 * Stores a job's spans (storeSpans), in a COPY shared with the other jobs that are ready at the
 * same moment (CopyCombiner): small jobs are stored at the cost of large ones. The job's bodies are
 * read from Redis once and held until its spans are stored; each is decoded when the COPY asks for
 * its spans, one request at a time, so only that request's records are alive at once. A job tried
 * before still goes by the COPY first: a writer killed mid-COPY, or a Postgres that went away,
 * committed nothing of it (by statements, a crash test's redone jobs took nearly twice as long:
 * docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 * Only when a span is stored already are the held bodies decoded again, for the idempotent
 * statements. A job no retry can fix, whether found reading it or storing it, goes straight to the failed set.
 */
async function storeJob(db: Db, payloads: QueueRedis, job: Job<SpanBatchJob, SpanBatchResult>, pricer: SpanPricer, combiner: CopyCombiner, how: { lane: CopyLane; holder: string }): Promise<SpanBatchResult> {
  try {
    return await withJobBodies(payloads, job.data, async (bodies) => {
      // Counted once the job's envelope is known to be valid (withJobBodies checks it).
      const spanCount = spanCountOf(job.data)
      // No bodies: the job is a copy, added by a resent command, of one already stored.
      if (bodies.length === 0) return { inserted: 0, duplicates: spanCount }
      return storeSpans(db, await pricer.priced(spanSourcesOf(bodies)), { combiner, ...how, spanCount })
    })
  } catch (error) {
    throw jobFailure(error)
  }
}
