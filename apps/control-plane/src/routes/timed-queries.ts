import { withStatementTimeout, type Executor } from '@tracewell/db'
import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs the reads of a trace, session or usage query under the statement timeout
     * (QUERY_TIMEOUT_MS): past it Postgres stops the query and the request is answered 400
     * (@tracewell/http's error handler), never left hanging.
     */
    timedQuery<T>(work: (db: Executor) => Promise<T>): Promise<T>
  }
}

/** Default of QUERY_TIMEOUT_MS (packages/config), for hosts that do not pass the setting. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000

export function decorateTimedQuery(app: FastifyInstance, timeoutMs: number): void {
  app.decorate('timedQuery', function timedQuery<T>(work: (db: Executor) => Promise<T>): Promise<T> {
    return withStatementTimeout(app.db, timeoutMs, work)
  })
}
