import { Kysely, PostgresDialect, type Transaction } from 'kysely'
import type pg from 'pg'
import { poolOf, type Db } from './create-db.ts'
import type { Database } from './database.ts'

/**
 * Runs `work` in a transaction of its own, handing it, on Postgres, the transaction's pg client
 * beside the Kysely transaction, for what Kysely cannot say (a COPY into the same transaction).
 * On PGlite the client is undefined and the transaction is Kysely's own.
 *
 * The Kysely transaction runs on that one checked-out client (a dialect whose pool holds only it),
 * so statements through either go into the same transaction, and a nested transaction() throws as
 * it does on any Kysely transaction.
 */
export async function transactionWithClient<T>(db: Db, work: (trx: Transaction<Database>, client: pg.PoolClient | undefined) => Promise<T>): Promise<T> {
  const pool = poolOf.get(db)
  if (pool === undefined) return db.transaction().execute((trx) => work(trx, undefined))
  return withPoolClient(pool, (client) => {
    const onlyThisClient = {
      connect: async () => ({ query: client.query.bind(client), release() {} }),
      end: async () => {},
    } as unknown as pg.Pool
    const single = new Kysely<Database>({ dialect: new PostgresDialect({ pool: onlyThisClient }) })
    return single.transaction().execute((trx) => work(trx, client))
  })
}

/**
 * Runs `work` on a client checked out of `pool`, and returns it to the pool afterwards, or
 * destroys it when its connection broke meanwhile: a connection lost while checked out emits
 * 'error' on the client (which without a listener would crash the process), and `work` may report
 * one it found itself (a rollback that failed) through `broke`.
 */
export async function withPoolClient<T>(pool: pg.Pool, work: (client: pg.PoolClient, broke: (error: Error) => void) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  const broke = (error: Error) => {
    broken ??= error
  }
  client.on('error', broke)
  try {
    return await work(client, broke)
  } finally {
    client.off('error', broke)
    client.release(broken)
  }
}
