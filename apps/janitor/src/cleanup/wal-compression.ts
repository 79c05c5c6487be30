import { sql, type Db, type Executor } from '@tracewell/db'

/**
 * The first time after a checkpoint that a batch touches a page, Postgres writes the whole 8 KB
 * page to the WAL; a batch of deletes touches thousands of old pages for the first time, so
 * nearly all of the janitor's WAL is such page images (2.8 KB a span deleted, summaries
 * included, in bench:cleanup). Every commit of concurrent ingest must wait for that WAL to be
 * flushed before its own record, so it is also what the janitor costs ingest. Compressed, the
 * images take a fifth of that (lz4: 0.5 KB a span).
 *
 * `wal_compression` may be set by a superuser, or a role granted it (Postgres 15+: `GRANT SET ON
 * PARAMETER wal_compression TO …`); elsewhere, and on a server built without lz4, the janitor
 * works as before, with the server's own setting.
 */
const algorithms = ['lz4', 'pglz'] as const
export type WalCompression = (typeof algorithms)[number] | null

/** The best algorithm this connection's role may use for the WAL of its own transactions, or null: tried once a run, in throwaway transactions. */
export async function probeWalCompression(db: Db): Promise<WalCompression> {
  for (const algorithm of algorithms) {
    try {
      await db.transaction().execute((trx) => compressWal(trx, algorithm))
      return algorithm
    } catch {
      // Not permitted, or not built in: the next one, or none.
    }
  }
  return null
}

/** Sets the algorithm for the rest of the transaction `trx` (a no-op for null). */
export async function compressWal(trx: Executor, algorithm: WalCompression): Promise<void> {
  if (algorithm !== null) await sql`select set_config('wal_compression', ${algorithm}, true)`.execute(trx)
}
