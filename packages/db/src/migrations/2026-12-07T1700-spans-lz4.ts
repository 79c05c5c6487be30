import { sql, type Kysely, type RawBuilder } from 'kysely'

// Frozen in time: never import application code here.
//
// A span's JSON columns (attributes, resource attributes, events, links) are compressed with lz4
// instead of Postgres's default pglz, on a server built with lz4 (Debian's, the official images;
// PGlite is not, and keeps pglz). A row over about 2 KB has its largest values compressed as it is
// stored: LLM spans with a system prompt, retrieved context or a long answer, the common case in
// production. lz4 stores such a row for about half of pglz's CPU and reads it back faster, for the
// same size (docs/benchmarks.md, "Spans' JSON compressed with lz4").
//
// Postgres does not pass SET COMPRESSION on from a partitioned table to its partitions, so every
// partition is altered too; the day partitions made later copy it (`including compression`,
// day-partitions.repository.ts). Only values stored from now on are compressed with lz4: the rows
// already stored keep pglz, which Postgres reads as before. Nothing is rewritten.
//
// Beside running writers: each ALTER takes its table's exclusive lock for an instant, but while it
// waits for that lock behind a long query (a search over the month), every write to the table
// waits behind it. So one table at a time, each in a transaction of its own that waits for its lock
// at most LOCK_WAIT and then tries again a moment later, the writers going on in between.

export const transactional = false

const COLUMNS = ['attributes', 'resource_attributes', 'events', 'links']
const LOCK_WAIT = '2s'
const RETRY_AFTER_MS = 500
/** Postgres's lock_not_available: lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03'

export async function up(db: Kysely<unknown>): Promise<void> {
  await setCompression(db, 'lz4')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await setCompression(db, 'default')
}

async function setCompression(db: Kysely<unknown>, method: 'lz4' | 'default'): Promise<void> {
  const { rows: [setting] } = await sql<{ lz4: boolean }>`
    select coalesce('lz4' = any(enumvals), false) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(db)
  if (setting?.lz4 !== true) return
  const { rows: tables } = await sql<{ name: string }>`select relid::regclass::text as name from pg_partition_tree('spans') order by level, relid`.execute(db)
  const columns = sql.join(COLUMNS.map((column) => sql`alter column ${sql.id(column)} set compression ${sql.raw(method)}`))
  for (const { name } of tables) await withShortLockWaits(db, sql`alter table ${sql.raw(name)} ${columns}`)
}

async function withShortLockWaits(db: Kysely<unknown>, statement: RawBuilder<unknown>): Promise<void> {
  // Inside a caller's transaction (a migrator run with transactions, as tests step down and up),
  // a statement that failed could not be tried again: it waits as the caller's transaction does.
  if (db.isTransaction) {
    await statement.execute(db)
    return
  }
  for (;;) {
    try {
      await db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = ${sql.lit(LOCK_WAIT)}`.execute(trx)
        await statement.execute(trx)
      })
      return
    } catch (error) {
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error
      await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS))
    }
  }
}
