import { sql } from 'kysely'
import { engineOf, type Db } from './create-db.ts'

export type AdvisoryLockResult<T> = { acquired: true; value: T } | { acquired: false }

// Keys held by this process on an embedded database, which has one session and one process.
const heldEmbeddedLocks = new Set<string>()

/**
 * Runs `work` while holding a Postgres advisory lock, or reports that another holder (in any
 * process connected to the same database) has it. The lock is transaction-level, taken in a
 * transaction left open on a connection reserved for it while `work` commits many small
 * transactions on the pool, and released by that transaction's end. Not a session-level lock:
 * through PgBouncer in transaction pooling mode the unlock could reach another server connection
 * than the lock, which would then stay held for as long as its server connection lives; an open
 * transaction keeps its server connection to itself. Between statements a read-committed
 * transaction holds no snapshot, so it does not hold back vacuum.
 */
export async function withAdvisoryLock<T>(db: Db, key: bigint, work: () => Promise<T>): Promise<AdvisoryLockResult<T>> {
  if (engineOf.get(db) === 'pglite') {
    const name = key.toString()
    if (heldEmbeddedLocks.has(name)) return { acquired: false }
    heldEmbeddedLocks.add(name)
    try {
      return { acquired: true, value: await work() }
    } finally {
      heldEmbeddedLocks.delete(name)
    }
  }
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection)
    try {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${key}) as locked`.execute(connection)
      if (!rows[0]?.locked) return { acquired: false } as const
      return { acquired: true, value: await work() } as const
    } finally {
      await sql`commit`.execute(connection)
    }
  })
}
