import { Type, type Static } from '@sinclair/typebox'
import type { SpanRecord } from '@tracewell/otlp'

// The contract between ingest (producer) and writer (consumer), imported by both. Changes to the
// payload must stay additive: jobs written by the previous version may still be in the queue
// while a new writer starts (house style §7).

export const QueueNames = { spanBatches: 'span-batches' } as const

/** Spans of one project, as accepted by one or more ingest requests. */
export interface ProjectSpans {
  projectId: string
  spans: SpanRecord[]
  /**
   * More spans of the project, as one JSON array text: those with an attribute key that JSON
   * writes with an escape sequence, which BullMQ's JSON.parse could corrupt (escaped-keys.encoding.ts).
   * Only the BullMQ producer writes it; read every span with `spansOfBatch`.
   */
  spansJson?: string
}

/** The fields the writer checks on every queued span before storing it. */
export const QueuedSpanSchema = Type.Object({ traceId: Type.String(), spanId: Type.String() }, { additionalProperties: true })

/**
 * One queue job: the spans of every request that arrived together (group commit), grouped by
 * project. The records inside were fully validated by ingest; the writer checks the envelope.
 */
export const SpanBatchJobSchema = Type.Object({
  version: Type.Literal(1),
  batches: Type.Array(
    Type.Object({
      projectId: Type.String({ minLength: 1 }),
      spans: Type.Array(QueuedSpanSchema),
      spansJson: Type.Optional(Type.String()),
    }),
  ),
})
export type SpanBatchJobEnvelope = Static<typeof SpanBatchJobSchema>
export interface SpanBatchJob {
  version: 1
  batches: ProjectSpans[]
}

/** The queue as ingest sees it. */
export interface SpanBatchProducer {
  /**
   * Resolves only once the spans are durably in the queue (Redis acknowledged the write, or the
   * in-process queue handed them to the writer and it stored them). Rejects with
   * QueueUnavailableError (→ 503) or QueueBacklogFullError (→ 429).
   */
  enqueue(projectId: string, spans: SpanRecord[]): Promise<void>
  /** Spans waiting in the queue, as last measured (for admission control and metrics). */
  backlog(): number
  /** Whether the queue's store answers (for /readyz). */
  ping(): Promise<void>
  close(): Promise<void>
}

export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError'
}

export class QueueBacklogFullError extends Error {
  override name = 'QueueBacklogFullError'
}
