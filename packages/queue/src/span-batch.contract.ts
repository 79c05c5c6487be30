import { Type, type Static } from '@sinclair/typebox'
import type { SpanRecord } from '@tracewell/otlp'
import type { UnwritableShard } from './shard-writability.ts'

// The contract between ingest (producer) and writer (consumer), imported by both. Changes to the
// payload must stay additive: jobs written by the previous version may still be in the queue
// while a new writer starts, so the writer reads every version below. (Version 1, spans inline in
// the job, was never written by a released ingest; its number is not reused.)

export const QueueNames = { spanBatches: 'span-batches' } as const

/**
 * How a queued body is encoded (this package never decodes one): 'records' is the span records
 * ingest decoded (@tracewell/otlp encodeSpanRecords), which the writer parses instead of decoding
 * the request again; 'json' and 'protobuf' are request bodies as they came, which ingest queued
 * until records were added and the writer still decodes.
 */
export type TraceBodyEncoding = 'json' | 'protobuf' | 'records'

/** One accepted ingest request, as the queue receives it. */
export interface AcceptedTraces {
  projectId: string
  /** How many valid spans the body holds. */
  spanCount: number
  /**
   * The validated spans, which the in-process queue stores directly (needsSpanRecords); null when
   * the body was decoded in another thread, which sends back only its count.
   */
  spans: SpanRecord[] | null
  /**
   * The bytes the BullMQ queue carries, encoded as `bodyEncoding` says: the spans' records
   * (encodeSpanRecords), or the (inflated) request body they were decoded from.
   */
  body: Uint8Array
  bodyEncoding: TraceBodyEncoding
}

/** Spans of one project, as accepted by one or more ingest requests (the in-process queue's unit). */
export interface ProjectSpans {
  projectId: string
  spans: SpanRecord[]
}

/**
 * Version 2: the request bodies of every request that arrived together (group commit), by
 * reference. The bodies are a Redis list at `payloadKey`, in the order of `requests`, written
 * before the job (span-batch.payload.ts); the writer decodes them again and deletes the list once
 * the job has completed. No longer written (a resent RPUSH appended the bodies twice); still read,
 * for jobs queued by an older ingest.
 */
export const ReferencedSpanBatchJobSchema = Type.Object({
  version: Type.Literal(2),
  payloadKey: Type.String({ minLength: 1 }),
  requests: Type.Array(
    Type.Object({
      projectId: Type.String({ minLength: 1 }),
      encoding: Type.Union([Type.Literal('json'), Type.Literal('protobuf')]),
      /** Spans in the body, counted by ingest (for the backlog estimate and `queue:replay --list`). */
      spans: Type.Integer({ minimum: 0 }),
    }),
    { minItems: 1 },
  ),
})
export type ReferencedSpanBatchJob = Static<typeof ReferencedSpanBatchJobSchema>

/**
 * Version 3: as version 2, but the bodies are a Redis hash of field `i` → body `i`, so writing
 * them twice (a command that ioredis resent after a dropped connection) stores them once; the
 * job's id is the payload's id (span-batch.payload.ts), so adding it twice adds it once.
 * `bytes` is each body's size, for the backlog's byte count.
 */
export const KeyedSpanBatchJobSchema = Type.Object({
  version: Type.Literal(3),
  payloadKey: Type.String({ minLength: 1 }),
  /**
   * Set (an addition to version 3) when every request is this project's and the job counts in its
   * turns (project-turns.ts): the writer then ends the turn once the job is done. Jobs of an older
   * ingest mix projects and lack it.
   */
  projectId: Type.Optional(Type.String({ minLength: 1 })),
  requests: Type.Array(
    Type.Object({
      projectId: Type.String({ minLength: 1 }),
      /** 'records' is an addition to version 3: a writer older than it fails such a job (docs/operations.md#upgrading). */
      encoding: Type.Union([Type.Literal('json'), Type.Literal('protobuf'), Type.Literal('records')]),
      spans: Type.Integer({ minimum: 0 }),
      bytes: Type.Integer({ minimum: 0 }),
    }),
    { minItems: 1 },
  ),
})
export type KeyedSpanBatchJob = Static<typeof KeyedSpanBatchJobSchema>

export const SpanBatchJobSchema = Type.Union([ReferencedSpanBatchJobSchema, KeyedSpanBatchJobSchema])
export type SpanBatchJob = ReferencedSpanBatchJob | KeyedSpanBatchJob

/** The queue as ingest sees it. */
export interface SpanBatchProducer {
  /**
   * Resolves only once the spans are durably in the queue (Redis acknowledged the write, or the
   * in-process queue handed them to the writer and it stored them). Rejects with
   * QueueUnavailableError (→ 503) or QueueBacklogFullError (→ 429). Either way, once it has
   * settled the queue no longer reads `traces.body`: the caller may release its memory.
   */
  enqueue(traces: AcceptedTraces): Promise<void>
  /** Whether enqueue needs `traces.spans` (the in-process queue) or only the body's bytes (BullMQ). */
  readonly needsSpanRecords: boolean
  /** Spans waiting in the queue, as last measured (for admission control and metrics). */
  backlog(): number
  /** Request-body bytes waiting in the queue, as last measured (0 where bodies are not queued). */
  backlogBytes(): number
  /**
   * Whether the queue can take writes (for /readyz): throws when it cannot take any; a sharded
   * queue with some shards writable resolves and names the others in unwritableShards().
   */
  ping(): Promise<void>
  /** The shards that cannot take writes now, whose projects are answered 503 (none where the queue is not sharded). */
  unwritableShards?(): UnwritableShard[]
  close(): Promise<void>
}

export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError'
}

export class QueueBacklogFullError extends Error {
  override name = 'QueueBacklogFullError'
}

/** A job the writer can never store as it is: a malformed envelope, or a payload gone or unreadable. */
export class InvalidSpanBatchJobError extends Error {
  override name = 'InvalidSpanBatchJobError'
}
