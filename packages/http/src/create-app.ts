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
  /** Where log lines go; standard output unless a test captures them. */
  logDestination?: { write(line: string): void }
}

// Secrets that arrive in headers never reach the logs (the console's session cookie among them).
const redactedPaths = ['req.headers["x-api-key"]', 'req.headers["cron-api-key"]', 'req.headers["x-admin-key"]', 'req.headers.authorization', 'req.headers.cookie']

/** The Fastify instance every Tracewell service starts from: logging, request ids, TypeBox. */
export function createApp(options: CreateAppOptions = {}): App {
  return Fastify(appServerOptions(options)).withTypeProvider<TypeBoxTypeProvider>()
}

/**
 * The server options behind createApp: Fastify's defaults (its query parser and per-request pino
 * child, which measured as cheap as our replacements did: npm run bench:framework) but for the
 * logger's redaction, the body limit, request ids and TypeBox's AJV settings. Exported for that
 * benchmark, which measures the app against variants of it.
 */
export function appServerOptions(options: CreateAppOptions = {}): FastifyServerOptions {
  return {
    logger:
      options.logger === false
        ? false
        : { level: options.logLevel ?? 'info', redact: { paths: redactedPaths, censor: '[redacted]' }, ...(options.logDestination ? { stream: options.logDestination } : {}) },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A caller's request id is kept (so a 5xx can be traced across services), otherwise a UUID:
    // Fastify's own req-N ids repeat across processes and restarts. A cheaper generator of ours
    // (a random prefix and a counter) measured no different (npm run bench:framework).
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
  }
}
