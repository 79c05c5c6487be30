import { setTimeout as sleep } from 'node:timers/promises'
import type { SpanRecord } from '@tracewell/otlp'
import { GroupCommit } from './group-commit.ts'
import { QueueBacklogFullError, QueueUnavailableError, type SpanBatchJob, type SpanBatchProducer } from './span-batch.contract.ts'

export interface InProcessSpanBatchProducerOptions {
  /** Stores one job (the writer's processor on the embedded database). */
  process: (job: SpanBatchJob) => Promise<void>
  maxSpansPerJob: number
  maxBacklogSpans: number
  /** Tries per job before the callers get QueueUnavailableError (default 4). */
  attempts?: number
  /** Delay before the first retry, doubled each time (default 100 ms). */
  retryDelayMs?: number
}

/**
 * The queue for `npm start` without Redis: the same group commit, but a write is the writer's
 * processor itself, so a caller is answered only once its spans are in the database.
 */
export function createInProcessSpanBatchProducer(options: InProcessSpanBatchProducerOptions): SpanBatchProducer {
  const attempts = options.attempts ?? 4
  const retryDelayMs = options.retryDelayMs ?? 100
  let closed = false

  async function processWithRetries(job: SpanBatchJob): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await options.process(job)
      } catch (error) {
        if (attempt >= attempts) {
          throw new QueueUnavailableError(`could not store spans: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
        }
        await sleep(retryDelayMs * 2 ** (attempt - 1))
      }
    }
  }

  const groupCommit = new GroupCommit({
    maxSpansPerJob: options.maxSpansPerJob,
    write: async (jobs) => {
      for (const job of jobs) await processWithRetries(job)
    },
  })

  return {
    async enqueue(projectId: string, spans: SpanRecord[]) {
      if (closed) throw new QueueUnavailableError('queue is shutting down')
      if (groupCommit.unacknowledgedSpans >= options.maxBacklogSpans) {
        throw new QueueBacklogFullError(`queue backlog is full (${groupCommit.unacknowledgedSpans} spans pending)`)
      }
      return groupCommit.submit(projectId, spans)
    },
    backlog: () => groupCommit.unacknowledgedSpans,
    ping: async () => {},
    async close() {
      closed = true
      await groupCommit.flushed()
    },
  }
}
