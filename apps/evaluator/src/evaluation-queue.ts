import { hostname } from 'node:os'
import { Queue, UnrecoverableError, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { LlmCallError } from '@tracewell/llm-calls'

// The evaluations queue, beside the span queue: one queue job per judgment (its id is the
// judgment's, so adding one twice adds nothing), retried with exponential backoff, a limit on how
// many run at once. BullMQ over Redis; without Redis (`npm start`), the same contract in process.

export const evaluationQueueName = 'evaluations'
/** Experiment items: the same queue contract under its own name, with its own concurrency. */
export const experimentQueueName = 'experiment-items'

/** Runs one judgment; `final` when no retry is left after this attempt. */
export type JudgeJob = (jobId: string, final: boolean) => Promise<unknown>

export interface EvaluationQueueOptions {
  /** The queue's name (default evaluations) and what one of its jobs is called in the logs. */
  queueName?: string
  jobKind?: string
  concurrency: number
  maxAttempts: number
  backoffMs: number
  judge: JudgeJob
  logger: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void }
}

export interface EvaluationQueue {
  /** Queues these judgments (ids already queued are left as they are). */
  add(jobIds: readonly string[]): Promise<void>
  /** Whether the queue's store answers (for /readyz). */
  ping(): Promise<void>
  /** Stops taking judgments and lets the running ones finish. */
  close(): Promise<void>
}

/** A judge error the queue must not retry. */
const unrecoverable = (error: unknown) => (error instanceof LlmCallError && !error.retryable ? new UnrecoverableError(error.message) : error)

export function createBullMqEvaluationQueue(options: EvaluationQueueOptions & { redisUrl: string; prefix: string }): EvaluationQueue {
  const common = { retryStrategy: (times: number) => Math.min(100 * 2 ** Math.min(times, 5), 2_000), connectTimeout: 2_000 }
  const name = `tracewell-evaluator:${hostname()}:${process.pid}`
  // The producer side gives up after 5 s (the scheduler tries again next round; the rows wait in
  // Postgres); the worker waits for Redis as long as it takes.
  const producer = new Redis(options.redisUrl, { ...common, maxRetriesPerRequest: 1, commandTimeout: 5_000, connectionName: name })
  const workerConnection = new Redis(options.redisUrl, { ...common, maxRetriesPerRequest: null, connectionName: name })
  const queueName = options.queueName ?? evaluationQueueName
  const jobKind = options.jobKind ?? 'judgment'
  const queue = new Queue(queueName, { connection: producer, prefix: options.prefix })
  const worker = new Worker<{ jobId: string }>(
    queueName,
    async (job) => {
      const final = job.attemptsMade + 1 >= options.maxAttempts
      try {
        return await options.judge(job.data.jobId, final)
      } catch (error) {
        throw unrecoverable(error)
      }
    },
    { connection: workerConnection, prefix: options.prefix, concurrency: options.concurrency },
  )
  worker.on('failed', (job, error) => options.logger.warn({ jobId: job?.data.jobId, attempt: job?.attemptsMade, err: error }, `${jobKind} failed`))
  worker.on('error', (error) => options.logger.error({ err: error }, `${queueName} worker error`))
  return {
    async add(jobIds) {
      if (jobIds.length === 0) return
      await queue.addBulk(
        jobIds.map((jobId) => ({
          name: jobKind,
          data: { jobId },
          opts: {
            jobId,
            attempts: options.maxAttempts,
            backoff: { type: 'exponential', delay: options.backoffMs },
            // The judgment's row is the record; queue jobs are kept only while they may still be retried.
            removeOnComplete: { age: 3600 },
            removeOnFail: { age: 24 * 3600 },
          },
        })),
      )
    },
    async ping() {
      await producer.ping()
    },
    async close() {
      await worker.close()
      await queue.close()
      producer.disconnect()
      workerConnection.disconnect()
    },
  }
}

/** The same contract in process: judgments wait in memory, `concurrency` at a time, retried after backoff. */
export function createInProcessEvaluationQueue(options: EvaluationQueueOptions): EvaluationQueue {
  const known = new Set<string>()
  const waiting: Array<{ jobId: string; attempt: number }> = []
  const timers = new Set<NodeJS.Timeout>()
  let running = 0
  let closed = false
  let idle: (() => void) | undefined

  const pump = () => {
    while (!closed && running < options.concurrency && waiting.length > 0) {
      const next = waiting.shift() as { jobId: string; attempt: number }
      running++
      const final = next.attempt >= options.maxAttempts
      options
        .judge(next.jobId, final)
        .then(
          () => known.delete(next.jobId),
          (error: unknown) => {
            options.logger.warn({ jobId: next.jobId, attempt: next.attempt, err: error }, `${options.jobKind ?? 'judgment'} failed`)
            if (final || (error instanceof LlmCallError && !error.retryable) || closed) return void known.delete(next.jobId)
            const timer = setTimeout(() => {
              timers.delete(timer)
              waiting.push({ jobId: next.jobId, attempt: next.attempt + 1 })
              pump()
            }, options.backoffMs * 2 ** (next.attempt - 1))
            timers.add(timer)
          },
        )
        .finally(() => {
          running--
          if (running === 0) idle?.()
          pump()
        })
    }
  }

  return {
    async add(jobIds) {
      for (const jobId of jobIds) {
        if (known.has(jobId)) continue
        known.add(jobId)
        waiting.push({ jobId, attempt: 1 })
      }
      pump()
    },
    async ping() {},
    async close() {
      closed = true
      for (const timer of timers) clearTimeout(timer)
      if (running > 0) await new Promise<void>((resolve) => (idle = resolve))
    },
  }
}
