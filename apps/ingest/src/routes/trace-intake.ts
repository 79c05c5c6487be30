import type { IncomingMessage } from 'node:http'
import type { VerifiedKey } from '@tracewell/auth'
import type { App } from '@tracewell/http'
import { requireKey } from '@tracewell/http'
import { encodeSpanRecords, type SpanRecord, type TraceBodyFormat } from '@tracewell/otlp'
import { QueueBacklogFullError, QueueUnavailableError, releaseBody, type AcceptedTraces, type SpanBatchProducer, type SpanRateVerdict, type TraceBodyEncoding } from '@tracewell/queue'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { readBody, type BodyLimits } from '../body/body.reader.ts'
import { formatOf, requireEncoding, requireFormat, traceMediaTypes, type BodyEncoding, type BodyFormat } from '../body/media-type.ts'
import { jsonBodyScreen } from '../body/json-body.screen.ts'
import { DecodeTurn } from '../body/decode-turn.ts'
import { decodeMaskedTraceBody } from '../body/masked-trace-body.decoder.ts'
import { TraceDecodePool, type DecodedCount } from '../body/trace-decode.pool.ts'
import { bodyTooLarge, DecodersBusyError, queueBacklogFull, queueUnavailable, tooManySpans } from '../errors.ts'
import { rejectionReasonOf, type IngestMetrics } from '../ingest.metrics.ts'
import { partialSuccessOf, type PartialSuccess } from '../otlp/partial-success.ts'
import type { IngestRateLimiter } from '../rate-limit/ingest-rate-limiter.ts'
import type { ProjectMasking, ProjectMaskers } from '../masking/project-maskers.cache.ts'

export interface TraceLimits extends BodyLimits {
  /** Most spans accepted in one request (MAX_SPANS_PER_REQUEST). */
  maxSpansPerRequest: number
  /** Most values in one JSON body (MAX_JSON_VALUES). */
  maxJsonValues: number
  /** Most fields in one protobuf body (MAX_PROTOBUF_FIELDS). */
  maxProtobufFields: number
}

/** What the onRequest hook learned from the headers, for the parser and the handler. */
export interface TraceIntake {
  projectId: string
  format: BodyFormat
  encoding: BodyEncoding
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on the trace routes once the request's key and content type are accepted. */
    traceIntake: TraceIntake | null
    /** Set when every decode worker was busy: the 503 that follows is not the queue's. */
    decodersWereBusy: boolean
  }
}

export interface TraceIntakeOptions {
  producer: SpanBatchProducer
  limits: TraceLimits
  metrics: IngestMetrics
  /** Where large bodies are decoded (DECODE_THREADS); none decodes every body in this thread. */
  decodePool?: TraceDecodePool | undefined
  /** Per-project rate limits; none limits nothing. */
  rateLimiter?: IngestRateLimiter | undefined
  /** Per-project masking rules; none masks nothing. */
  maskers?: ProjectMaskers | undefined
}

/**
 * Everything the trace routes share, installed into one route context: authentication and the
 * content checks on headers alone (no work on the body of an unauthenticated request),
 * the streaming body reader, and the per-request metrics. Returns the handler's core, which
 * answers what became of the body's spans.
 */
export function installTraceIntake(app: App, options: TraceIntakeOptions): (request: FastifyRequest) => Promise<AcceptedTraceBody> {
  const { limits, metrics } = options

  app.decorateRequest('traceIntake', null)
  app.decorateRequest('decodersWereBusy', false)

  // A project key first (a team key is the wrong kind for ingest, an invalid key here), then the
  // content checks on headers alone.
  app.addHook('onRequest', requireKey('project', { unauthorized: 'Invalid API key', permission: 'traces:ingest' }))
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    let refused: Error | undefined
    try {
      const format = requireFormat(request.headers['content-type'])
      const encoding = requireEncoding(request.headers['content-encoding'])
      // A declared length over the limit is refused before a byte is read.
      if (Number(request.headers['content-length']) > limits.maxBodyBytes) throw bodyTooLarge(limits.maxBodyBytes)
      const projectId = (request.apiKey as VerifiedKey).projectId as string
      // A project whose bucket cannot hold a span yet is refused before its body is read.
      const early = options.rateLimiter?.refusedEarly(projectId)
      if (early) throw early
      request.traceIntake = { projectId, format, encoding }
    } catch (error) {
      refused = error as Error
    }
    // done() outside the try: it runs the rest of the request, whose errors are not this hook's.
    done(refused)
  })

  // The body arrives as bytes; which decoder reads it was decided from the headers above. A
  // larger JSON body is screened while it arrives, so that what the handler parses in one go
  // costs a bounded amount whatever the client sent.
  const parseBody = (request: FastifyRequest, payload: IncomingMessage) => {
    const intake = request.traceIntake as TraceIntake
    return readBody(payload, intake.encoding, limits, intake.format === 'json' ? jsonBodyScreen(limits.maxJsonValues) : undefined)
  }
  // The same parser under each media type and as the catch-all ('*', for other spellings the hook
  // above let through, such as upper case). Fastify remembers the parser it found for a
  // Content-Type, but never the catch-all's: with it alone, every request parsed its header again
  // (2% of ingest's CPU on one-span requests, docs/benchmarks.md).
  app.removeAllContentTypeParsers()
  for (const mediaType of [...traceMediaTypes, '*']) app.addContentTypeParser(mediaType, parseBody)

  app.addHook('onError', (request: FastifyRequest, _reply: FastifyReply, error: Error, done: () => void) => {
    if (error instanceof DecodersBusyError) request.decodersWereBusy = true
    done()
  })

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const reason = rejectionReasonOf(reply.statusCode, reply.hasHeader('ratelimit-limit'), request.decodersWereBusy)
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.request(route, formatOf(request.headers['content-type']) ?? 'other', reason ?? 'accepted')
    done()
  })

  return async (request) => {
    const intake = request.traceIntake as TraceIntake
    const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0)
    request.body = undefined
    return acceptTraceBody(options, intake.projectId, intake.format, body)
  }
}

/** What the answer needs of a decoded body: its format and how many of its spans were accepted and rejected, and why. */
type SpanCount = Pick<DecodedCount, 'format' | 'accepted' | 'rejected' | 'problems'>

/** What a request's answer says about its spans. */
export interface AcceptedTraceBody {
  format: TraceBodyFormat
  /** Spans now in the queue. */
  accepted: number
  /** Invalid spans refused one by one; null when every span was valid. */
  partialSuccess: PartialSuccess | null
  /** The project's rate-limit bucket after this request, for the answer's headers; null when no limit applies. */
  rateLimit: SpanRateVerdict | null
}

/**
 * The core of every trace transport (HTTP and gRPC): decodes a body of a project whose key was
 * checked, hands its valid spans to the queue, and resolves once the queue holds them. Throws the
 * 4xx of a body that is not a batch or has no valid span, and 429/503 when the queue cannot take it.
 */
export async function acceptTraceBody(options: TraceIntakeOptions, projectId: string, format: BodyFormat, body: Buffer): Promise<AcceptedTraceBody> {
  const { decodePool, producer } = options
  const masking = options.maskers?.of(projectId) ?? null
  const offThread = decodePool !== undefined && !producer.needsSpanRecords && TraceDecodePool.wants(body)
  const { answer, queued } = offThread
    ? queueCounted(options, projectId, ...(await decodeOffThread(decodePool, format, body, options.limits.maxProtobufFields, masking)))
    : await decodeTurn.run(() => queueBody(options, projectId, format, body, masking))
  await queued
  options.metrics.spansAccepted(answer.accepted)
  if (answer.partialSuccess !== null) options.metrics.spansRejected(answer.partialSuccess.rejectedSpans)
  return answer
}

/** This thread's requests are decoded in runs, a turn of the event loop at a time. */
const decodeTurn = new DecodeTurn()

/**
 * Decodes the body, derives its spans' LLM fields and hands the records to the queue: the one
 * decode between the request and the stored row (docs/architecture.md#decode-once). Synchronous on
 * purpose: the span records stay in this frame only, so they are garbage as soon as the queue has
 * taken what it keeps (their encoding, for Redis) instead of living in the caller's suspended
 * frame until Redis answers. Under load that was most of what ingest promoted into V8's old generation.
 */
function queueBody(options: TraceIntakeOptions, projectId: string, format: BodyFormat, body: Buffer, masking: ProjectMasking | null): { answer: AcceptedTraceBody; queued: Promise<void> } {
  const maxFields = options.limits.maxProtobufFields
  const { decoded, spans, masked } = decodeMaskedTraceBody(body, format, maxFields, masking?.masker ?? null)
  const counted = { ...decoded, accepted: decoded.spans.length }
  const queuedBody = masked?.body ?? body
  if (masked !== null) releaseBody(body)
  // The in-process queue stores the records themselves; Redis carries them encoded.
  if (options.producer.needsSpanRecords) return queueCounted(options, projectId, masked?.format ?? format, queuedBody, counted, spans)
  const records = encodeSpanRecords(spans)
  releaseBody(queuedBody)
  return queueCounted(options, projectId, 'records', records, counted)
}

/** A large body decoded, masked and derived in a decode worker: the records to queue, and what it counted. */
async function decodeOffThread(pool: TraceDecodePool, format: BodyFormat, body: Buffer, maxFields: number, masking: ProjectMasking | null): Promise<['records', Buffer, DecodedCount]> {
  const counted = await pool.decode(body, format, maxFields, masking?.rulesJson)
  releaseBody(body)
  const { records } = counted
  return ['records', Buffer.from(records.buffer, records.byteOffset, records.byteLength), counted]
}

/** Hands a decoded body's spans to the queue; `spans` are its records where this thread decoded it. */
function queueCounted(
  { producer, limits, rateLimiter }: TraceIntakeOptions,
  projectId: string,
  encoding: TraceBodyEncoding,
  body: Buffer,
  decoded: SpanCount,
  spans: SpanRecord[] | null = null,
): { answer: AcceptedTraceBody; queued: Promise<void> } {
  const { accepted } = decoded
  if (accepted > limits.maxSpansPerRequest) throw tooManySpans(accepted, limits.maxSpansPerRequest)
  const answer: AcceptedTraceBody = { format: decoded.format, accepted, partialSuccess: partialSuccessOf(accepted, decoded.rejected, decoded.problems), rateLimit: null }
  // An empty batch is a success that stores nothing.
  if (accepted === 0) return { answer, queued: Promise.resolve() }
  // The queue is done with the bytes once it has answered (SpanBatchProducer.enqueue).
  const traces: AcceptedTraces = { projectId, spanCount: accepted, spans, body, bodyEncoding: encoding }
  const queued = rateLimiter
    ? // The records wait for the bucket's answer only where the queue stores them (the in-process queue).
      (async (limited: AcceptedTraces) => {
        answer.rateLimit = await rateLimiter.take(projectId, accepted)
        try {
          await enqueue(producer, limited)
        } catch (error) {
          if (answer.rateLimit !== null) void rateLimiter.giveBack(projectId, accepted)
          throw error
        }
      })(producer.needsSpanRecords ? traces : { ...traces, spans: null })
    : enqueue(producer, traces)
  return { answer, queued: queued.finally(() => releaseBody(body)) }
}

/** The 200 waits for Redis to hold the spans; a full or absent queue says when to retry. */
function enqueue(producer: SpanBatchProducer, traces: AcceptedTraces): Promise<void> {
  return producer.enqueue(traces).catch((error: unknown) => {
    if (error instanceof QueueBacklogFullError) throw queueBacklogFull()
    if (error instanceof QueueUnavailableError) throw queueUnavailable()
    throw error
  })
}
