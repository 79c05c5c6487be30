import { setTimeout as sleep } from 'node:timers/promises'
import type { SpanRecord } from '@tracewell/otlp'
import { GroupCommit, groupBySpans } from './group-commit.ts'
import { QueueBacklogFullError, QueueUnavailableError, type AcceptedTraces, type ProjectSpans, type SpanBatchProducer } from './span-batch.contract.ts'

export interface InProcessSpanBatchProducerOptions {
  /** Stores one group of spans, by project (the writer's processor on the embedded database). */
  process: (batches: ProjectSpans[]) => Promise<void>
  maxSpansPerJob: number
  maxBacklogSpans: number
  /** Tries per job before the callers get QueueUnavailableError (default 4). */
  attempts?: number
  /** Delay before the first retry, doubled each time (default 100 ms). */
  retryDelayMs?: number
}

interface InlineRequest {
  projectId: string
  spans: SpanRecord[]
}

/** The records themselves, grouped by project: nothing leaves the process, so nothing is encoded. */
function byProject(requests: readonly InlineRequest[]): ProjectSpans[] {
  const grouped = new Map<string, SpanRecord[]>()
  for (const { projectId, spans } of requests) {
    const batch = grouped.get(projectId)
    if (batch) for (const span of spans) batch.push(span)
    else grouped.set(projectId, [...spans])
  }
  return [...grouped].map(([projectId, spans]) => ({ projectId, spans }))
}

/**
 * The queue for `npm start` without Redis: the same group commit, but a write is the writer's
 * processor itself, so a caller is answered only once its spans are in the database.
 */
export function createInProcessSpanBatchProducer(options: InProcessSpanBatchProducerOptions): SpanBatchProducer {
  const attempts = options.attempts ?? 4
  const retryDelayMs = options.retryDelayMs ?? 100
  let closed = false

  async function processWithRetries(batches: ProjectSpans[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await options.process(batches)
      } catch (error) {
        if (attempt >= attempts) {
          throw new QueueUnavailableError(`could not store spans: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
        }
        await sleep(retryDelayMs * 2 ** (attempt - 1))
      }
    }
  }

  const sizeOf = (request: InlineRequest) => request.spans.length
  const groupCommit = new GroupCommit<InlineRequest>({
    sizeOf,
    maxSpansPerWrite: options.maxSpansPerJob * 16,
    write: async (requests) => {
      for (const group of groupBySpans(requests, sizeOf, options.maxSpansPerJob)) await processWithRetries(byProject(group))
    },
  })

  return {
    needsSpanRecords: true,
    async enqueue({ projectId, spans }: AcceptedTraces) {
      if (closed) throw new QueueUnavailableError('queue is shutting down')
      if (spans === null) throw new TypeError('the in-process queue stores span records: decode the body in this thread')
      if (groupCommit.unacknowledgedSpans >= options.maxBacklogSpans) {
        throw new QueueBacklogFullError(`queue backlog is full (${groupCommit.unacknowledgedSpans} spans pending)`)
      }
      return groupCommit.submit({ projectId, spans })
    },
    backlog: () => groupCommit.unacknowledgedSpans,
    // Nothing is queued as bytes: each batch's records go straight to the writer.
    backlogBytes: () => 0,
    ping: async () => {},
    async close() {
      closed = true
      await groupCommit.flushed()
    },
  }
}
