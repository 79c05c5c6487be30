import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../database.ts'

/** What a repository function runs on: the database, or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>

/**
 * Runs `work` in the caller's transaction when given one, else in a transaction of its own, so a
 * repository step can be composed into a larger transaction (Kysely transactions do not nest).
 */
export function inTransaction<T>(db: Executor, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction<Database>) : db.transaction().execute(work)
}
