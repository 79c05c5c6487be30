import type { FastifyError, FastifyInstance } from 'fastify'

/** How a service (or a group of its routes) shapes an error body; ingest and the control plane differ (docs/api.md#conventions). */
export type ErrorBodyShape = (statusCode: number, message: string) => Record<string, unknown>

export const messageBody: ErrorBodyShape = (_statusCode, message) => ({ message })
export const statusAndMessageBody: ErrorBodyShape = (statusCode, message) => ({ status: statusCode, message })

interface HttpError extends FastifyError {
  retryAfterSeconds?: number
}

/**
 * Installs the one error handler of an encapsulation context (the app, or one service's routes
 * inside the all-in-one app). Client errors keep their message, which says what was wrong and
 * where; anything else is logged with the request id and answered without detail.
 */
export function installErrorHandler(app: FastifyInstance, shape: ErrorBodyShape): void {
  app.setErrorHandler((error: HttpError, request, reply) => {
    const statusCode = error.statusCode ?? 500
    if (statusCode >= 400 && statusCode < 500) {
      if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds))
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

function clientMessage(error: HttpError): string {
  if (error.validation) {
    // Fastify says e.g. "querystring/version must be integer"; name the part and the field.
    return `${error.validationContext ?? 'request'}${error.validation[0]?.instancePath ?? ''}: ${error.validation[0]?.message ?? error.message}`
  }
  return error.message
}
