import { BadRequestError, PayloadTooLargeError, ServiceUnavailableError, TooManyRequestsError, UnsupportedMediaTypeError } from '@tracewell/http'

// The ingest answers (docs/api.md#send-traces) that carry a message of ours. Each is one of the shared HTTP
// errors, so the one error handler maps it to its status.

export const ACCEPTED_CONTENT_TYPES = ['application/json', 'application/x-protobuf', 'application/protobuf'] as const
export const ACCEPTED_CONTENT_ENCODINGS = ['gzip', 'deflate', 'identity'] as const

/** Seconds a client should wait: a full backlog drains in moments, a Redis outage takes longer. */
export const RETRY_AFTER_BACKLOG_FULL_S = 1
export const RETRY_AFTER_QUEUE_UNAVAILABLE_S = 5

export const unsupportedContentType = (contentType: string | undefined) =>
  new UnsupportedMediaTypeError(
    `Unsupported Content-Type ${contentType === undefined || contentType === '' ? '(none)' : `'${contentType}'`}; accepted: ${ACCEPTED_CONTENT_TYPES.join(', ')}`,
  )

export const unsupportedContentEncoding = (encoding: string) =>
  new UnsupportedMediaTypeError(`Unsupported Content-Encoding '${encoding}'; accepted: ${ACCEPTED_CONTENT_ENCODINGS.join(', ')}`)

export const bodyTooLarge = (limit: number) => new PayloadTooLargeError(`body: larger than ${limit} bytes (MAX_BODY_BYTES)`)

export const inflatedBodyTooLarge = (limit: number) =>
  new PayloadTooLargeError(`body: larger than ${limit} bytes once decompressed (MAX_INFLATED_BYTES)`)

export const tooManySpans = (count: number, limit: number) =>
  new PayloadTooLargeError(`body: ${count} spans, more than the ${limit} accepted in one request (MAX_SPANS_PER_REQUEST)`)

export const corruptCompressedBody = (encoding: string, reason: string) => new BadRequestError(`body: invalid ${encoding} data (${reason})`)

export const malformedJson = (reason: string) => new BadRequestError(`body: malformed JSON (${reason})`)

export const tooManyJsonValues = (limit: number) =>
  new PayloadTooLargeError(`body: more than ${limit} JSON values in one request (MAX_JSON_VALUES)`)

export const tooManyProtobufFields = (limit: number) =>
  new PayloadTooLargeError(`body: more than ${limit} protobuf fields in one request (MAX_PROTOBUF_FIELDS)`)

export const jsonTooDeep = (limit: number) => new BadRequestError(`body: JSON nested deeper than ${limit} levels`)

export const queueBacklogFull = () =>
  new TooManyRequestsError(`Too many spans are waiting to be stored; retry after ${RETRY_AFTER_BACKLOG_FULL_S} s`, RETRY_AFTER_BACKLOG_FULL_S)

export const queueUnavailable = () =>
  new ServiceUnavailableError(`The trace queue is unavailable; retry after ${RETRY_AFTER_QUEUE_UNAVAILABLE_S} s`, RETRY_AFTER_QUEUE_UNAVAILABLE_S)

export const RETRY_AFTER_DECODERS_BUSY_S = 1

/** A 503 of this ingest's own decoders, not of the queue: counted apart (the `decoders_busy` rejection). */
export class DecodersBusyError extends ServiceUnavailableError {}

export const decodersBusy = () =>
  new DecodersBusyError(`Too many large bodies are waiting to be decoded; retry after ${RETRY_AFTER_DECODERS_BUSY_S} s`, RETRY_AFTER_DECODERS_BUSY_S)

/** A 429 of a project over its ingest rate limit: Retry-After, and the rate-limit header fields it is answered with. */
export class SpanRateLimitedError extends TooManyRequestsError {
  readonly headers: Record<string, string>
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string>) {
    super(message, retryAfterSeconds)
    this.headers = headers
  }
}

export const spanRateLimited = (
  projectId: string,
  spans: number,
  limit: { spansPerSecond: number; burst: number },
  verdict: { remaining: number; retryAfterSeconds: number },
  headers: Record<string, string>,
) =>
  new SpanRateLimitedError(
    `Project ${projectId} is over its ingest rate limit of ${limit.spansPerSecond} spans per second (burst ${limit.burst}): ${spans} spans sent, ${verdict.remaining} left now; retry after ${verdict.retryAfterSeconds} s`,
    verdict.retryAfterSeconds,
    headers,
  )

/** The same 429 answered before the body is read: the project's bucket cannot hold a span yet. */
export const spanRateLimitedEarly = (projectId: string, limit: { spansPerSecond: number; burst: number }, verdict: { retryAfterSeconds: number }, headers: Record<string, string>) =>
  new SpanRateLimitedError(
    `Project ${projectId} is over its ingest rate limit of ${limit.spansPerSecond} spans per second (burst ${limit.burst}): no span left now; retry after ${verdict.retryAfterSeconds} s`,
    verdict.retryAfterSeconds,
    headers,
  )
