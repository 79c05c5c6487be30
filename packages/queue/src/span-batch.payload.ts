import { randomUUID } from 'node:crypto'
import { Value } from '@sinclair/typebox/value'
import { decodeTraceBody, type SpanRecord } from '@tracewell/otlp'
import type { Redis } from 'ioredis'
import { releaseBody } from './body-memory.ts'
import { spansOfBatch } from './inline-spans.ts'
import {
  InvalidSpanBatchJobError,
  QueueNames,
  SpanBatchJobSchema,
  type ProjectSpans,
  type ReferencedSpanBatchJob,
  type SpanBatchJob,
  type TraceBodyEncoding,
} from './span-batch.contract.ts'

// Version 2 jobs carry their request bodies by reference: the bodies are one Redis list per job,
// written before the job is added and deleted after it completed. Only the writer's `completed`
// handler deletes a payload, so a job that is retried, stalled or parked in the failed set still
// finds its bodies.

/**
 * How long a payload outlives its last write. It only reclaims orphans (a job add that failed
 * after its payload was written, a writer killed between completing a job and deleting its
 * payload), so it is far longer than any job can wait: failed jobs are kept 14 days
 * (job-options.ts), and `queue:replay` renews the payloads of the jobs it replays.
 */
export const payloadTtlSeconds = 30 * 24 * 3600

export interface QueuedRequest {
  projectId: string
  body: Uint8Array
  encoding: TraceBodyEncoding
  spans: number
}

/** A fresh payload key under the queue's prefix, so `obliterate` and key scans find it with the queue. */
export const newPayloadKey = (prefix: string): string => `${prefix}:${QueueNames.spanBatches}:payload:${randomUUID()}`

/** The job of a group of requests whose bodies are (about to be) stored at `payloadKey`. */
export function referencedJob(payloadKey: string, requests: readonly QueuedRequest[]): ReferencedSpanBatchJob {
  return { version: 2, payloadKey, requests: requests.map(({ projectId, encoding, spans }) => ({ projectId, encoding, spans })) }
}

/**
 * Writes the bodies of each job (RPUSH, then EXPIRE, sent back to back), all jobs at once. Plain
 * commands, because the alternatives measured worse under 1-span requests from 50 connections:
 * - an ioredis pipeline copies the ~50 scripts BullMQ defines on the connection each time, and
 *   with two pipelines per group write that copying and its garbage cost ingest more CPU than
 *   everything else it does for a 1-span request (84 µs of CPU per request against 58);
 * - a Lua script doing both atomically copies every body twice more inside Redis: 30% more Redis
 *   CPU and 10% more for ingest.
 * The price is that a connection lost between the two commands leaves a payload without a TTL.
 * Its request got a 503 and is resent, so nothing is lost; the orphan is a few bodies' bytes.
 */
export async function writePayloads(redis: Redis, payloads: ReadonlyArray<{ key: string; bodies: Uint8Array[] }>): Promise<void> {
  await Promise.all(payloads.flatMap(({ key, bodies }) => [redis.rpush(key, ...bodies.map(asBuffer)), redis.expire(key, payloadTtlSeconds)]))
}

const asBuffer = (body: Uint8Array): Buffer => (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength))

export async function deletePayload(redis: Redis, job: SpanBatchJob): Promise<void> {
  if (job?.version === 2) await redis.del(job.payloadKey)
}

/** Gives a replayed job's payload the full TTL again. */
export async function renewPayload(redis: Redis, job: SpanBatchJob): Promise<void> {
  if (job?.version === 2 && typeof job.payloadKey === 'string') await redis.expire(job.payloadKey, payloadTtlSeconds)
}

/**
 * Spans in a job, without reading a payload from Redis: a version 1 job's `spansJson` spans count
 * too (spansOfBatch throws on a corrupt one).
 */
export function spanCountOf(job: SpanBatchJob): number {
  if (job.version === 2) return job.requests.reduce((sum, request) => sum + request.spans, 0)
  return job.batches.reduce((sum, batch) => sum + spansOfBatch(batch).length, 0)
}

/**
 * One request's spans in a queued job (or one inline batch's), decoded each time `spans()` is
 * called: the writer encodes a job one request at a time, so only that request's records are
 * alive at once instead of the whole job's. Throws InvalidSpanBatchJobError for a body that no
 * longer decodes.
 */
export interface QueuedSpans {
  projectId: string
  spans(): SpanRecord[]
}

/**
 * Runs `use` on the spans of a queued job (readQueuedJob), then frees the bodies read for it
 * (body-memory.ts): they live as long as the job's COPY, long enough to be promoted. Errors are
 * readQueuedJob's and `use`'s.
 */
export async function withQueuedSpans<T>(redis: Redis, job: unknown, use: (sources: QueuedSpans[]) => Promise<T>): Promise<T> {
  const { sources, bodies } = await readQueuedJob(redis, job)
  try {
    return await use(sources)
  } finally {
    for (const body of bodies) releaseBody(body)
  }
}

/**
 * The spans of a queued job, as the writer stores them: inline spans as they are, referenced
 * bodies read from Redis, to be decoded again when asked for, and those bodies. Throws
 * InvalidSpanBatchJobError for a job no retry can fix (bad envelope, payload missing); Redis
 * errors propagate.
 */
async function readQueuedJob(redis: Redis, job: unknown): Promise<{ sources: QueuedSpans[]; bodies: Buffer[] }> {
  if (!Value.Check(SpanBatchJobSchema, job)) {
    const first = Value.Errors(SpanBatchJobSchema, job).First()
    throw new InvalidSpanBatchJobError(`invalid span-batch job: ${first ? `${first.path || '/'} ${first.message}` : 'not an object'}`)
  }
  const checked = job as SpanBatchJob
  if (checked.version === 1) {
    return { sources: checked.batches.map((batch, index) => ({ projectId: batch.projectId, spans: () => inlineSpans(batch, index) })), bodies: [] }
  }
  const bodies = await redis.lrangeBuffer(checked.payloadKey, 0, -1)
  if (bodies.length !== checked.requests.length) {
    throw new InvalidSpanBatchJobError(`span-batch payload ${checked.payloadKey} holds ${bodies.length} of ${checked.requests.length} bodies`)
  }
  const sources = checked.requests.map((request, index) => ({ projectId: request.projectId, spans: () => decodeBody(bodies[index] as Buffer, request.encoding, index) }))
  return { sources, bodies }
}

/** Every span of a queued job, decoded at once and grouped by project (readQueuedJob, eagerly). */
export async function spansOfJob(redis: Redis, job: unknown): Promise<ProjectSpans[]> {
  return (await readQueuedJob(redis, job)).sources.map((queued) => ({ projectId: queued.projectId, spans: queued.spans() }))
}

function inlineSpans(batch: ProjectSpans, index: number): SpanRecord[] {
  try {
    return spansOfBatch(batch)
  } catch (error) {
    throw new InvalidSpanBatchJobError(`invalid span-batch job: /batches/${index}/${(error as Error).message}`)
  }
}

function decodeBody(body: Buffer, encoding: TraceBodyEncoding, index: number): SpanRecord[] {
  try {
    return decodeTraceBody(body, encoding).spans
  } catch (error) {
    // Ingest decoded the same bytes before accepting them: only a changed decoder gets here.
    throw new InvalidSpanBatchJobError(`span-batch body ${index} no longer decodes: ${(error as Error).message}`)
  }
}
