import { sql } from 'kysely'
import { engineOf, type Db } from './create-db.ts'
import type { Executor } from './repositories/executor.ts'

/**
 * Runs the read-only `work` with a Postgres statement timeout of `timeoutMs` (QUERY_TIMEOUT_MS),
 * and JIT compilation off: a query that runs longer is cancelled in Postgres itself, where it
 * would otherwise hold a connection and a core for as long as it takes, and fails with SQLSTATE
 * 57014 (isStatementTimeout). Both are set for one transaction only (`set_config(…, true)`, i.e.
 * SET LOCAL), so the pool's connections, which the writer and the janitor share in `npm start`,
 * keep none. The embedded database (PGlite) runs queries on the process's own thread and cannot
 * interrupt them, so there `work` simply runs.
 *
 * The transaction is driven by hand, not with Kysely's `transaction()`: Kysely sends its
 * ROLLBACK straight to the connection, ahead of queries of `work` still queued on it (a
 * Promise.all whose first query failed), which then ran after the ROLLBACK, outside the
 * transaction and without the timeout. Statements sent through the connection's own queue, as
 * here, run in order: those queued queries fail at once in the aborted transaction.
 */
export async function withStatementTimeout<T>(db: Db, timeoutMs: number, work: (executor: Executor) => Promise<T>): Promise<T> {
  if (engineOf.get(db) !== 'postgres') return work(db)
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection)
    try {
      // And without JIT compilation: these queries answer in milliseconds from indexes, but a plan
      // estimated dear (an EXISTS over 35 day partitions of spans, trace by trace, under a LIMIT
      // that stops after a few hundred) crosses jit_above_cost and pays 100–600 ms of compiling
      // for nothing (bench:query's attribute filter: 14 ms of execution after 608 ms of JIT).
      await sql`select set_config('statement_timeout', ${String(Math.trunc(timeoutMs))}, true), set_config('jit', 'off', true)`.execute(connection)
      const result = await work(connection)
      await sql`commit`.execute(connection)
      return result
    } catch (error) {
      // A broken connection cannot roll back; the pool discards it.
      await sql`rollback`.execute(connection).catch(() => {})
      throw error
    }
  })
}
