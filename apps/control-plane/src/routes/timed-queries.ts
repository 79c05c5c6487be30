import { withStatementTimeout, type Executor } from '@tracewell/db'
import type { FastifyInstance } from 'fastify'
import type { ReplicaReads } from './replica-reads.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs the reads of a trace, session or usage query under the statement timeout
     * (QUERY_TIMEOUT_MS): past it Postgres stops the query and the request is answered 400
     * (@tracewell/http's error handler), never left hanging. With DATABASE_READ_URL they run on
     * the replica once it has what this process wrote (replica-reads.ts).
     */
    timedQuery<T>(work: (db: Executor) => Promise<T>): Promise<T>
  }
}

/** Default of QUERY_TIMEOUT_MS (packages/config), for hosts that do not pass the setting. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000

export function decorateTimedQuery(app: FastifyInstance, timeoutMs: number, replica: ReplicaReads | undefined): void {
  app.decorate('timedQuery', function timedQuery<T>(work: (db: Executor) => Promise<T>): Promise<T> {
    return replica === undefined ? withStatementTimeout(app.db, timeoutMs, work) : replica.read(timeoutMs, work)
  })
}
