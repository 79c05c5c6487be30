import { randomUUID } from 'node:crypto'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, type RawServerDefault, type RawRequestDefaultExpression, type RawReplyDefaultExpression } from 'fastify'
import { parseQueryString } from './query-string.ts'
import { lazyRequestLoggerFactory } from './request-logger.ts'

/** A Fastify instance typed by our TypeBox schemas: what every service's buildApp returns. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

export interface CreateAppOptions {
  logLevel?: string
  /** Largest request body Fastify will read, in bytes. */
  bodyLimit?: number
  /** Tests pass `false` to keep output quiet. */
  logger?: boolean
  /** Where log lines go; standard output unless a test captures them. */
  logDestination?: { write(line: string): void }
}

// Secrets that arrive in headers never reach the logs (the console's session cookie among them).
const redactedPaths = ['req.headers["x-api-key"]', 'req.headers["cron-api-key"]', 'req.headers["x-admin-key"]', 'req.headers.authorization', 'req.headers.cookie']

/**
 * Request ids: UUIDs that share one random prefix per app and end in a counter. They are as unique
 * as random ones (74 random bits per app, a counter within it) without a randomUUID() per request,
 * which cost more than a microsecond in a request of a few dozen.
 */
function requestIdGenerator(): () => string {
  const prefix = randomUUID().slice(0, 24)
  let counter = 0
  return () => {
    counter = (counter + 1) % 2 ** 48
    return prefix + counter.toString(16).padStart(12, '0')
  }
}

/** The Fastify instance every Tracewell service starts from: logging, request ids, TypeBox. */
export function createApp(options: CreateAppOptions = {}): App {
  const serverOptions: FastifyServerOptions = {
    logger:
      options.logger === false
        ? false
        : { level: options.logLevel ?? 'info', redact: { paths: redactedPaths, censor: '[redacted]' }, ...(options.logDestination ? { stream: options.logDestination } : {}) },
    // Each request's logger becomes a pino child only when it logs (see request-logger.ts).
    childLoggerFactory: lazyRequestLoggerFactory,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A caller's request id is kept (so a 5xx can be traced across services), otherwise a UUID.
    requestIdHeader: 'x-request-id',
    genReqId: requestIdGenerator(),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    // Same results as Fastify's default parser, at about half the cost (see query-string.ts).
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQueryString },
    forceCloseConnections: 'idle',
  }
  return Fastify(serverOptions).withTypeProvider<TypeBoxTypeProvider>()
}
