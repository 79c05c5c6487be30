import { sql } from 'kysely'
import { engineOf, type Db } from './create-db.ts'

export type AdvisoryLockResult<T> = { acquired: true; value: T } | { acquired: false }

// Keys held by this process on an embedded database, which has one session and one process.
const heldEmbeddedLocks = new Set<string>()

/**
 * Runs `work` while holding a Postgres session-level advisory lock, or reports that another
 * holder (in any process connected to the same database) has it. The lock lives on a connection
 * reserved for it, so `work` can commit many small transactions on the pool meanwhile.
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
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(connection)
    if (!rows[0]?.locked) return { acquired: false } as const
    try {
      return { acquired: true, value: await work() } as const
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(connection)
    }
  })
}
