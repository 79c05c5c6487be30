import createError from '@fastify/error'

// Errors shared by every service; each carries the HTTP status it maps to. Services add their
// own in their errors.ts.

export const UnauthorizedError = createError<[string]>('TW_UNAUTHORIZED', '%s', 401)
export const ForbiddenError = createError<[string]>('TW_FORBIDDEN', '%s', 403)
export const NotFoundError = createError<[string]>('TW_NOT_FOUND', '%s', 404)
export const BadRequestError = createError<[string]>('TW_BAD_REQUEST', '%s', 400)
export const ConflictError = createError<[string]>('TW_CONFLICT', '%s', 409)
/** A link that worked once and no longer does (used, revoked or expired): 410 says it will not come back. */
export const GoneError = createError<[string]>('TW_GONE', '%s', 410)
export const PayloadTooLargeError = createError<[string]>('TW_PAYLOAD_TOO_LARGE', '%s', 413)
export const UnsupportedMediaTypeError = createError<[string]>('TW_UNSUPPORTED_MEDIA_TYPE', '%s', 415)

/** Answers that tell the client to come back later: 429 (backpressure), 503 (a dependency is down). */
export class TooManyRequestsError extends Error {
  readonly statusCode = 429
  readonly retryAfterSeconds: number
  constructor(message: string, retryAfterSeconds: number) {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}
export class ServiceUnavailableError extends Error {
  readonly statusCode = 503
  readonly retryAfterSeconds: number
  constructor(message: string, retryAfterSeconds: number) {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** Seconds a client should wait when the database cannot be reached. */
const RETRY_AFTER_DATABASE_UNAVAILABLE_S = 5

/** The answer to a request whose query found the database unreachable (a Postgres outage): 503 and when to retry, never a 500. */
export const databaseUnavailable = () =>
  new ServiceUnavailableError(`The database cannot be reached right now; retry after ${RETRY_AFTER_DATABASE_UNAVAILABLE_S} s`, RETRY_AFTER_DATABASE_UNAVAILABLE_S)

/**
 * The answer to a query Postgres cancelled at its statement timeout (QUERY_TIMEOUT_MS): a 400, as
 * Sentry answers a query that runs too long, since sending the same query again would only
 * spend the same time again; the client narrows it instead.
 */
export const queryTimedOut = () =>
  new BadRequestError('query: took longer than the query time limit (QUERY_TIMEOUT_MS) and was stopped; narrow it with a shorter from–to range or more filters')

/** Seconds a client should wait when API keys cannot be checked (the database is unreachable). */
const RETRY_AFTER_KEY_STORE_UNAVAILABLE_S = 5

/**
 * The answer of every service to a key it had to look up while the key store is unreachable:
 * the key may well be fine, so 503 and when to retry, never 401 or 500.
 */
export const keyStoreUnavailable = () =>
  new ServiceUnavailableError(`API keys cannot be checked right now; retry after ${RETRY_AFTER_KEY_STORE_UNAVAILABLE_S} s`, RETRY_AFTER_KEY_STORE_UNAVAILABLE_S)
