import { Queue } from 'bullmq'
import type { SpanRecord } from '@tracewell/otlp'
import { encodeForRedis, spansOfBatch } from './escaped-keys.encoding.ts'
import { GroupCommit } from './group-commit.ts'
import { defaultSpanBatchJobOptions, spanBatchJobName } from './job-options.ts'
import { createSpanBatchQueueConnection } from './redis-connection.ts'
import {
  QueueBacklogFullError,
  QueueNames,
  QueueUnavailableError,
  type SpanBatchJob,
  type SpanBatchProducer,
} from './span-batch.contract.ts'

export interface ProducerLogger {
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface BullMqSpanBatchProducerOptions {
  redisUrl: string
  prefix: string
  /** Waiting spans in the queue at or above which enqueue refuses work (QUEUE_MAX_BACKLOG). */
  maxBacklogSpans: number
  /** Most spans in one job (ENQUEUE_MAX_SPANS_PER_JOB). */
  maxSpansPerJob: number
  logger?: ProducerLogger
  /** How often the backlog is measured; admission control reads the last measurement. */
  backlogRefreshMs?: number
}

const spansIn = (job: SpanBatchJob): number => job.batches.reduce((sum, batch) => sum + spansOfBatch(batch).length, 0)

/**
 * The queue as ingest uses it in production: BullMQ on Redis, with group commit (one addBulk
 * pipeline, i.e. one round trip, per write), fast failure when Redis is unreachable, and
 * admission control on the measured backlog.
 */
export function createBullMqSpanBatchProducer(options: BullMqSpanBatchProducerOptions): SpanBatchProducer {
  const connection = createSpanBatchQueueConnection(options.redisUrl, 'producer')
  // Without a listener ioredis would print every failed reconnect; one line per outage is enough.
  let reportedOutage = false
  connection.on('error', (err: Error) => {
    if (reportedOutage) return
    reportedOutage = true
    options.logger?.warn({ err: { message: err.message } }, 'queue Redis unreachable; enqueue answers 503 until it is back')
  })
  connection.on('ready', () => {
    reportedOutage = false
  })
  const unavailable = (cause?: unknown) =>
    new QueueUnavailableError(`queue unavailable: ${cause instanceof Error ? cause.message : 'Redis is not connected'}`, { cause })

  // While the very first connection is being set up, a request waits for it briefly instead of
  // getting a 503 from a process that just started; during an outage it fails at once.
  const firstConnect = new Promise<void>((resolve) => {
    connection.once('ready', resolve)
    connection.once('error', resolve) // the first attempt failed: Redis is down, say so
    setTimeout(resolve, 1_000).unref()
  })
  let firstAttemptSettled = false
  void firstConnect.then(() => (firstAttemptSettled = true))
  const assertConnected = async () => {
    if (connection.status !== 'ready' && !firstAttemptSettled) await firstConnect
    if (connection.status !== 'ready') throw unavailable()
  }
  // skipWaitingForReady and skipVersionCheck: the queue must be usable the moment Redis answers,
  // even if it was down when the process started (the version check would otherwise fail once
  // and leave the queue broken for good).
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, {
    connection,
    prefix: options.prefix,
    defaultJobOptions: defaultSpanBatchJobOptions,
    skipWaitingForReady: true,
    skipVersionCheck: true,
  })
  queue.on('error', () => {}) // reported once through the connection listener above

  // Spans per job of this producer's recent writes: the backlog is measured in jobs (one cheap
  // call) and converted to spans with it. Under load, when the bound matters, group commit makes
  // jobs of every ingest replica similarly large, so the estimate is close.
  let spansPerJob: number | null = null
  const groupCommit = new GroupCommit({
    maxSpansPerJob: options.maxSpansPerJob,
    write: async (jobs) => {
      if (connection.status !== 'ready') throw unavailable()
      try {
        await queue.addBulk(jobs.map((job) => ({ name: spanBatchJobName, data: encodeForRedis(job) })))
      } catch (error) {
        throw unavailable(error)
      }
      const average = jobs.reduce((sum, job) => sum + spansIn(job), 0) / jobs.length
      spansPerJob = spansPerJob === null ? average : spansPerJob * 0.8 + average * 0.2
    },
  })

  let measuredBacklog = 0
  let measuring = false
  const measure = async () => {
    if (measuring || connection.status !== 'ready') return
    measuring = true
    try {
      const counts = await queue.getJobCounts('wait', 'delayed', 'prioritized')
      const jobs = Object.values(counts).reduce((sum, count) => sum + count, 0)
      if (jobs > 0 && spansPerJob === null) {
        // Nothing written by this process yet (e.g. just restarted): size one waiting job instead.
        const [sample] = await queue.getJobs(['wait', 'delayed', 'prioritized'], 0, 0)
        if (sample) spansPerJob = spansIn(sample.data)
      }
      measuredBacklog = Math.round(jobs * (spansPerJob ?? 1))
    } catch (error) {
      options.logger?.warn({ err: { message: (error as Error).message } }, 'could not measure the queue backlog')
    } finally {
      measuring = false
    }
  }
  const timer = setInterval(() => void measure(), options.backlogRefreshMs ?? 250)
  timer.unref()
  void measure()

  return {
    async enqueue(projectId: string, spans: SpanRecord[]) {
      await assertConnected()
      if (measuredBacklog + groupCommit.unacknowledgedSpans >= options.maxBacklogSpans) {
        throw new QueueBacklogFullError(`queue backlog is full (${measuredBacklog} spans waiting)`)
      }
      return groupCommit.submit(projectId, spans)
    },
    backlog: () => measuredBacklog,
    async ping() {
      try {
        await assertConnected()
        await connection.ping()
      } catch (error) {
        throw unavailable(error)
      }
    },
    async close() {
      clearInterval(timer)
      await groupCommit.flushed()
      await queue.close()
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
