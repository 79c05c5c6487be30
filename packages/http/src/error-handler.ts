import type { FastifyError, FastifyInstance } from 'fastify'
import { databaseUnavailable, queryTimedOut } from './errors.ts'

/**
 * Which database errors are not bugs. This package knows no database: whoever opens one says how
 * to recognise its failures (createApp's `databaseFailures`; @tracewell/service passes @tracewell/db's).
 */
export interface DatabaseFailures {
  /** The database cannot be reached right now. */
  isUnavailable(error: unknown): boolean
  /** Postgres cancelled a statement at its timeout. */
  isStatementTimeout(error: unknown): boolean
}

/** An app without a database: no error is one of its failures. */
export const noDatabaseFailures: DatabaseFailures = { isUnavailable: () => false, isStatementTimeout: () => false }

declare module 'fastify' {
  interface FastifyInstance {
    /** Set once by createApp; every error handler of the app's contexts reads it. */
    databaseFailures: DatabaseFailures
  }
}

/** How a service (or a group of its routes) shapes an error body; ingest and the control plane differ (docs/api.md#conventions). */
export type ErrorBodyShape = (statusCode: number, message: string) => Record<string, unknown>

export const messageBody: ErrorBodyShape = (_statusCode, message) => ({ message })
export const statusAndMessageBody: ErrorBodyShape = (statusCode, message) => ({ status: statusCode, message })

interface HttpError extends FastifyError {
  retryAfterSeconds?: number
  /** Header fields the answer carries (e.g. ingest's rate-limit fields on a 429). */
  headers?: Record<string, string>
}

/**
 * Installs the one error handler of an encapsulation context (the app, or one service's routes
 * inside the all-in-one app). Client errors keep their message, which says what was wrong and
 * where; anything else is logged with the request id and answered without detail.
 */
export function installErrorHandler(app: FastifyInstance, shape: ErrorBodyShape): void {
  const databaseFailures = app.hasDecorator('databaseFailures') ? app.databaseFailures : noDatabaseFailures
  app.setErrorHandler((raw: HttpError, request, reply) => {
    const error = asHttpError(raw, databaseFailures)
    const statusCode = error.statusCode ?? 500
    if (statusCode >= 400 && statusCode < 500) {
      if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds))
      if (error.headers !== undefined) void reply.headers(error.headers)
      return reply.code(statusCode).send(shape(statusCode, clientMessage(error)))
    }
    if (statusCode === 503 && error.retryAfterSeconds !== undefined) {
      request.log.warn({ err: error }, 'dependency unavailable')
      void reply.header('retry-after', String(error.retryAfterSeconds))
      return reply.code(503).send(shape(503, error.message))
    }
    request.log.error({ err: error, reqId: request.id }, 'request failed')
    return reply.code(500).send(shape(500, `Internal server error (request ${request.id})`))
  })
}

/**
 * A database error that is not a bug, as the answer it deserves: an unreachable database is a
 * 503 with Retry-After (the request may succeed in a moment, as key checks already answer), a
 * statement cancelled by its timeout a 400 that says to narrow the query. Anything else is as thrown.
 */
function asHttpError(error: HttpError, databaseFailures: DatabaseFailures): HttpError {
  if (error.statusCode !== undefined && error.statusCode !== 500) return error
  if (databaseFailures.isUnavailable(error)) return Object.assign(databaseUnavailable(), { cause: error }) as unknown as HttpError
  if (databaseFailures.isStatementTimeout(error)) return queryTimedOut() as HttpError
  return error
}

function clientMessage(error: HttpError): string {
  if (error.validation) {
    // Fastify says e.g. "querystring/version must be integer"; name the part and the field.
    return `${error.validationContext ?? 'request'}${error.validation[0]?.instancePath ?? ''}: ${error.validation[0]?.message ?? error.message}`
  }
  return error.message
}
