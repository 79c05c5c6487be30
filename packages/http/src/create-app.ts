import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, type RawServerDefault, type RawRequestDefaultExpression, type RawReplyDefaultExpression } from 'fastify'
import { noDatabaseFailures, type DatabaseFailures } from './error-handler.ts'
import { serializersOnFirstUse } from './serializers-on-first-use.ts'

/** A Fastify instance typed by our TypeBox schemas: what every service's buildApp returns. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

export interface CreateAppOptions {
  logLevel?: string
  /** Largest request body Fastify will read, in bytes. */
  bodyLimit?: number
  /**
   * How long a client may take to send a whole request, headers and body (BODY_TIMEOUT_MS); a
   * slower one is answered 408 and disconnected. Node's own default is 300 s, Fastify's none.
   */
  requestTimeoutMs?: number
  /** TRUST_PROXY, as Fastify's `trustProxy` takes it (trustProxyOf): whose X-Forwarded-For makes `request.ip`. */
  trustProxy?: boolean | string
  /** Tests pass `false` to keep output quiet. */
  logger?: boolean
  /** Where log lines go; standard output unless a test captures them. */
  logDestination?: { write(line: string): void }
  /** How the error handlers recognise the database's outages and statement timeouts (none, for an app without one). */
  databaseFailures?: DatabaseFailures
}

// Secrets that arrive in headers never reach the logs (the console's session cookie among them).
const redactedPaths = ['req.headers["x-api-key"]', 'req.headers["cron-api-key"]', 'req.headers["x-admin-key"]', 'req.headers.authorization', 'req.headers.cookie']

/** The Fastify instance every Tracewell service starts from: logging, request ids, TypeBox. */
export function createApp(options: CreateAppOptions = {}): App {
  const app = Fastify(appServerOptions(options)).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('databaseFailures', options.databaseFailures ?? noDatabaseFailures)
  return app
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
    schemaController: serializersOnFirstUse,
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
    trustProxy: options.trustProxy ?? false,
    // Node checks the connections for requests past their time this often (30 s by default,
    // which would let a slow sender stay twice the timeout). Headers must come within the same time.
    ...(options.requestTimeoutMs === undefined
      ? {}
      : {
          requestTimeout: options.requestTimeoutMs,
          http: { requestTimeout: options.requestTimeoutMs, headersTimeout: options.requestTimeoutMs, connectionsCheckingInterval: REQUEST_TIMEOUT_CHECK_MS },
          clientErrorHandler: answerClientError(options.requestTimeoutMs),
        }),
  }
}

const REQUEST_TIMEOUT_CHECK_MS = 1_000

/**
 * TRUST_PROXY's text as Fastify's `trustProxy`: `true`/`false`, or addresses and ranges (Fastify
 * reads the comma list). No hop count: Fastify 5 trusts nobody for one, as a count cannot tell
 * the proxy from a client that sends the header itself.
 */
export function trustProxyOf(setting: string | undefined): boolean | string {
  if (setting === undefined || setting === 'false') return false
  return setting === 'true' ? true : setting
}

/**
 * Fastify's answer to a connection error before routing (its `clientErrorHandler`), in the API's
 * `{message}` shape: a request not received within its time is a 408 naming the setting, as
 * a malformed one is a 400; the connection is closed either way.
 */
function answerClientError(requestTimeoutMs: number) {
  return function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const [status, body] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', `request: not received within ${requestTimeoutMs} ms (BODY_TIMEOUT_MS); send it faster or in smaller parts`]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? ['431 Request Header Fields Too Large', 'headers: larger than this server accepts']
          : ['400 Bad Request', 'request: not a valid HTTP request']
    const json = JSON.stringify({ message: body })
    // A response already under way (ingest refusing a body early) cannot be followed by another.
    const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (socket.writable && current?.headersSent !== true) socket.write(`HTTP/1.1 ${status}\r\nContent-Length: ${Buffer.byteLength(json)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${json}`)
    socket.destroy()
  }
}
