import { randomUUID } from 'node:crypto'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, type RawServerDefault, type RawRequestDefaultExpression, type RawReplyDefaultExpression } from 'fastify'

/** A Fastify instance typed by our TypeBox schemas: what every service's buildApp returns. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

export interface CreateAppOptions {
  logLevel?: string
  /** Largest request body Fastify will read, in bytes. */
  bodyLimit?: number
  /** Tests pass `false` to keep output quiet. */
  logger?: boolean
}

// Secrets that arrive in headers never reach the logs (house style §11).
const redactedPaths = ['req.headers["x-api-key"]', 'req.headers["cron-api-key"]', 'req.headers["x-admin-key"]', 'req.headers.authorization']

/** The Fastify instance every Tracewell service starts from: logging, request ids, TypeBox. */
export function createApp(options: CreateAppOptions = {}): App {
  const serverOptions: FastifyServerOptions = {
    logger: options.logger === false ? false : { level: options.logLevel ?? 'info', redact: { paths: redactedPaths, censor: '[redacted]' } },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A caller's request id is kept (so a 5xx can be traced across services), otherwise a UUID.
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
  }
  return Fastify(serverOptions).withTypeProvider<TypeBoxTypeProvider>()
}
