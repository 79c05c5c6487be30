import type { ProjectSpanSource } from '@tracewell/write-path'
import { decodeSpanRecords, decodeSpanRecordsToStore, decodeTraceBody, type SpanRecordToStore } from '@tracewell/otlp'
import { InvalidSpanBatchJobError, readJobBodies, type ProjectSpans, type QueuedBody } from '@tracewell/queue'
import type { Redis } from 'ioredis'

// The queue carries the span records ingest decoded ('records', docs/architecture.md#decode-once),
// which the writer parses; jobs of an older ingest carry the request bodies themselves, which it
// decodes with ingest's decoder (and SpanCollector), so it stores exactly the spans ingest counted.

/**
 * Each body as a source of its spans, decoded when storeSpans asks: a job is encoded one request
 * at a time, so only that request's records are alive at once, not the whole job's. The caller
 * holds the bodies until the spans are stored (withJobBodies), so a fallback from the COPY to the
 * statements decodes them again from memory, not from Redis.
 */
export function spanSourcesOf(bodies: readonly QueuedBody[]): ProjectSpanSource[] {
  return bodies.map((queued, index) => ({ projectId: queued.projectId, spans: () => decodeQueuedBody(queued, index, decodeSpanRecordsToStore) }))
}

/** Every span of a queued job, decoded at once and grouped by request (tests, and tools that inspect a queue). */
export async function spansOfJob(redis: Redis, job: unknown): Promise<ProjectSpans[]> {
  return (await readJobBodies(redis, job)).map((queued, index) => ({ projectId: queued.projectId, spans: decodeQueuedBody(queued, index, decodeSpanRecords) }))
}

/**
 * A body's spans, a 'records' body's by `decodeRecords` (to store, or with every value parsed).
 * Throws InvalidSpanBatchJobError for a body that no longer decodes: no retry can fix it.
 */
function decodeQueuedBody<Span extends SpanRecordToStore>({ body, encoding }: QueuedBody, index: number, decodeRecords: (body: Uint8Array) => Span[]): Span[] {
  try {
    return encoding === 'records' ? decodeRecords(body) : (decodeTraceBody(body, encoding).spans as Span[])
  } catch (error) {
    // Ingest decoded or encoded the same bytes before accepting them: only a changed decoder gets here.
    throw new InvalidSpanBatchJobError(`span-batch body ${index} no longer decodes: ${(error as Error).message}`)
  }
}
