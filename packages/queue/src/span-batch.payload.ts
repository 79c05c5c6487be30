import { randomUUID } from 'node:crypto'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { releaseBody } from './body-memory.ts'
import type { QueueRedis } from './redis-connection.ts'
import {
  InvalidSpanBatchJobError,
  QueueNames,
  SpanBatchJobSchema,
  type KeyedSpanBatchJob,
  type ReferencedSpanBatchJob,
  type SpanBatchJob,
  type TraceBodyEncoding,
} from './span-batch.contract.ts'

// Jobs carry their request bodies by reference: the bodies are one Redis key per job, written
// before the job is added. Every write is idempotent, because ioredis resends the commands that
// were in flight when a connection dropped, and Redis may already have executed them:
// - the bodies are a hash (field `i` → body `i`), so a resent HSET stores the same fields again;
// - the job's id is the payload's id, so a resent add finds the job and adds nothing;
// - a job added again after the first one completed (and was removed) finds its payload gone but
//   the "stored" marker the writer left in its place, and completes without storing anything.
// Only the writer deletes a payload (after its job completed) or an orphan (orphan-sweep.ts), so
// a job that is retried, stalled or parked in the failed set still finds its bodies.

/**
 * How long a payload outlives its last write: a backstop only. Orphans (a job add that failed
 * after its payload was written) are swept within minutes (orphan-sweep.ts), failed jobs are kept
 * 14 days (job-options.ts), and `queue:replay` renews the payloads of the jobs it replays.
 */
export const payloadTtlSeconds = 30 * 24 * 3600

/**
 * How long the marker of a stored payload stays. A resent add arrives within the reconnect that
 * resends it (ioredis resends only over the first reconnection), so minutes are ample.
 */
const storedMarkerTtlSeconds = 15 * 60

export interface QueuedRequest {
  projectId: string
  body: Uint8Array
  encoding: TraceBodyEncoding
  spans: number
}

/**
 * A fresh payload id, which is also its job's id: the creation time in ms (so the orphan sweep
 * can tell an old payload from one whose job is being added right now), then a random UUID.
 */
export const newPayloadId = (): string => `${Date.now()}-${randomUUID()}`

/** When a payload id was made (ms since the epoch), or null for an id of another shape. */
export function payloadIdTime(id: string): number | null {
  const match = /^(\d{13})-[0-9a-f-]{36}$/.exec(id)
  return match ? Number(match[1]) : null
}

/** The payload key of an id, under the queue's prefix, so `obliterate` and key scans find it with the queue. */
export const payloadKeyOf = (prefix: string, id: string): string => `${payloadKeyPrefix(prefix)}${id}`
export const payloadKeyPrefix = (prefix: string): string => `${prefix}:${QueueNames.spanBatches}:payload:`

/** The key that says a payload's job was stored, written when the payload is deleted. */
const storedMarkerKeyOf = (payloadKey: string): string => `${payloadKey}:stored`
export const isStoredMarkerKey = (key: string): boolean => key.endsWith(':stored')

/**
 * The job of a group of requests whose bodies are (about to be) stored at `payloadKey`; with
 * `projectId` when they are all that project's and the job is counted in its turns.
 */
export function keyedJob(payloadKey: string, requests: readonly QueuedRequest[], projectId?: string): KeyedSpanBatchJob {
  return {
    version: 3,
    payloadKey,
    ...(projectId === undefined ? {} : { projectId }),
    requests: requests.map(({ projectId, encoding, spans, body }) => ({ projectId, encoding, spans, bytes: body.byteLength })),
  }
}

/**
 * Writes the bodies of each job (HSET, then EXPIRE, sent back to back), all jobs at once. Plain
 * commands, because the alternatives measured worse under 1-span requests from 50 connections
 * (docs/benchmarks.md#figures-behind-code-comments-2026-12-06):
 * - an ioredis pipeline copies the scripts BullMQ defines on the connection each time, and with
 *   two pipelines per group write that copying and its garbage cost ingest more CPU than
 *   everything else it does for a 1-span request;
 * - a Lua script doing both atomically copies every body twice more inside Redis.
 * Both commands are idempotent, so a resend of either changes nothing. A connection lost between
 * them leaves a payload without a TTL; its request got a 503, and the orphan sweep removes it.
 */
export async function writePayloads(redis: QueueRedis, payloads: ReadonlyArray<{ key: string; bodies: Uint8Array[] }>): Promise<void> {
  await Promise.all(
    payloads.flatMap(({ key, bodies }) => [redis.hset(key, ...bodies.flatMap((body, index) => [String(index), asBuffer(body)])), redis.expire(key, payloadTtlSeconds)]),
  )
}

const asBuffer = (body: Uint8Array): Buffer => (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength))

/**
 * Deletes a stored job's payload, leaving a marker that says it was stored: a copy of the job
 * added later by a resent command then completes as a duplicate instead of failing.
 */
export async function deletePayload(redis: QueueRedis, job: SpanBatchJob): Promise<void> {
  await redis.set(storedMarkerKeyOf(job.payloadKey), '1', 'EX', storedMarkerTtlSeconds)
  await redis.del(job.payloadKey)
}

/** Gives a replayed job's payload the full TTL again. */
export async function renewPayload(redis: QueueRedis, job: SpanBatchJob): Promise<void> {
  if ((job?.version === 2 || job?.version === 3) && typeof job.payloadKey === 'string') await redis.expire(job.payloadKey, payloadTtlSeconds)
}

/** Spans in a job, as ingest counted them, without reading its payload from Redis. */
export function spanCountOf(job: SpanBatchJob): number {
  return job.requests.reduce((sum, request) => sum + request.spans, 0)
}

/** Request-body bytes of a job, as far as its version records them (0 for older versions). */
export function bodyBytesOf(job: SpanBatchJob): number {
  return job.version === 3 ? job.requests.reduce((sum, request) => sum + request.bytes, 0) : 0
}

/** One request of a queued job, as ingest accepted it: the consumer decodes `body` as `encoding` says. */
export interface QueuedBody {
  projectId: string
  encoding: TraceBodyEncoding
  body: Buffer
}

/**
 * Runs `use` on the request bodies of a queued job (readJobBodies), then frees them
 * (body-memory.ts): they live as long as the job's COPY, long enough to be promoted. Errors are
 * readJobBodies' and `use`'s.
 */
export async function withJobBodies<T>(redis: QueueRedis, job: unknown, use: (bodies: QueuedBody[]) => Promise<T>): Promise<T> {
  const bodies = await readJobBodies(redis, job)
  try {
    return await use(bodies)
  } finally {
    for (const { body } of bodies) releaseBody(body)
  }
}

/** The job schema compiled once: every job is checked, and the interpreting Value.Check showed in the writer's profile (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). */
const spanBatchJob = TypeCompiler.Compile(SpanBatchJobSchema)

/**
 * The request bodies of a queued job, read from Redis, in order. A job whose payload was already
 * stored (a duplicate added by a resent command) has none. Throws InvalidSpanBatchJobError for a
 * job no retry can fix (bad envelope, payload missing); Redis errors propagate. Decoding the
 * bodies is the consumer's business: this package carries bytes.
 */
export async function readJobBodies(redis: QueueRedis, job: unknown): Promise<QueuedBody[]> {
  if (!spanBatchJob.Check(job)) {
    const first = spanBatchJob.Errors(job).First()
    throw new InvalidSpanBatchJobError(`invalid span-batch job: ${first ? `${first.path || '/'} ${first.message}` : 'not an object'}`)
  }
  const checked = job as SpanBatchJob
  const bodies = checked.version === 3 ? await hashBodies(redis, checked) : await listBodies(redis, checked)
  if (bodies === null) {
    if (await redis.exists(storedMarkerKeyOf(checked.payloadKey))) return []
    throw new InvalidSpanBatchJobError(`span-batch payload ${checked.payloadKey} is missing`)
  }
  return checked.requests.map((request, index) => ({ projectId: request.projectId, encoding: request.encoding, body: bodies[index] as Buffer }))
}

/** A version 3 payload's bodies in order, or null when the payload is gone. */
async function hashBodies(redis: QueueRedis, job: KeyedSpanBatchJob): Promise<Buffer[] | null> {
  const found = await redis.hmgetBuffer(job.payloadKey, ...job.requests.map((_, index) => String(index)))
  const present = found.filter((body): body is Buffer => body !== null)
  if (present.length === 0) return null
  if (present.length !== job.requests.length) {
    throw new InvalidSpanBatchJobError(`span-batch payload ${job.payloadKey} holds ${present.length} of ${job.requests.length} bodies`)
  }
  return present
}

/**
 * A version 2 payload's bodies in order, or null when the payload is gone. An older ingest wrote
 * them with RPUSH, which a resend after a dropped connection appended again: a list of the same
 * bodies repeated whole is that, and its first copy is the payload.
 */
async function listBodies(redis: QueueRedis, job: ReferencedSpanBatchJob): Promise<Buffer[] | null> {
  const listed = await redis.lrangeBuffer(job.payloadKey, 0, -1)
  if (listed.length === 0) return null
  const count = job.requests.length
  const repeatedWhole = listed.length % count === 0 && listed.every((body, index) => body.equals(listed[index % count] as Buffer))
  if (!repeatedWhole) throw new InvalidSpanBatchJobError(`span-batch payload ${job.payloadKey} holds ${listed.length} of ${count} bodies`)
  return listed.slice(0, count)
}
