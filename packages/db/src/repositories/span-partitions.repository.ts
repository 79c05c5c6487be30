import { sql } from 'kysely'
import { inTransaction, type Executor } from './executor.ts'

// The daily partitions of `spans` (docs/operations.md#partitions): `spans_pYYYYMMDD` holds the
// spans that started on that UTC day, `spans_default` every span whose day has none. Made ahead of
// need by the writer (on start and every hour) and by the janitor (every run); dropped by the
// janitor once every project's retention has passed their day.

const dayMs = 86_400_000

/** The default partition: spans of a day without a partition of its own. */
export const DEFAULT_SPAN_PARTITION = 'spans_default'

/** Days after today made ahead of need (today and yesterday are always made too). */
export const SPAN_PARTITION_DAYS_AHEAD = 3

/**
 * The advisory lock that serialises making partitions across writers and janitors (one
 * transaction each). Its bytes spell "tw-parts" in ASCII; no other Tracewell lock may use it.
 */
const PARTITION_LOCK_KEY = 0x74772d7061727473n

export interface SpanPartition {
  name: string
  /** The UTC day it holds, [day, day + 24 h); null for the default partition. */
  day: Date | null
}

export const startOfUtcDay = (instant: Date): Date => new Date(Math.floor(instant.getTime() / dayMs) * dayMs)
export const dayAfter = (day: Date): Date => new Date(day.getTime() + dayMs)
export const spanPartitionName = (day: Date): string => `spans_p${startOfUtcDay(day).toISOString().slice(0, 10).replaceAll('-', '')}`

function dayOfName(name: string): Date | null {
  const match = /^spans_p(\d{4})(\d{2})(\d{2})$/.exec(name)
  return match ? new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`) : null
}

/** Every partition of `spans`, the default first, then by day. */
export async function listSpanPartitions(db: Executor): Promise<SpanPartition[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'spans'::regclass`.execute(db)
  const partitions = rows.map(({ name }) => ({ name, day: dayOfName(name) }))
  return partitions.sort((a, b) => (a.day?.getTime() ?? -Infinity) - (b.day?.getTime() ?? -Infinity))
}

/**
 * Makes the partition of each day from yesterday to `daysAhead` days after today that is missing,
 * each in a transaction of its own; answers the names it made. Cheap when none is missing (one
 * catalog query), so callers may call it often.
 */
export async function ensureSpanPartitions(db: Executor, now = new Date(), daysAhead = SPAN_PARTITION_DAYS_AHEAD): Promise<string[]> {
  const existing = new Set((await listSpanPartitions(db)).map((partition) => partition.name))
  const today = startOfUtcDay(now)
  const made: string[] = []
  for (let offset = -1; offset <= daysAhead; offset++) {
    const day = new Date(today.getTime() + offset * dayMs)
    if (existing.has(spanPartitionName(day))) continue
    if (await inTransaction(db, (trx) => createSpanPartition(trx, day))) made.push(spanPartitionName(day))
  }
  return made
}

/**
 * Makes one day's partition in the caller's transaction, unless another process made it first
 * (false). The default partition's rows of that day move into it in the same transaction, since
 * Postgres refuses to attach a range the default partition holds rows of; with the partitions made
 * ahead of need it holds few or none. Made apart and then attached: ATTACH takes a lock on `spans`
 * that inserts do not wait for, where CREATE TABLE … PARTITION OF would stop them.
 */
export async function createSpanPartition(trx: Executor, day: Date): Promise<boolean> {
  const name = spanPartitionName(day)
  await sql`select pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`.execute(trx)
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(trx)
  if (rows[0]?.found) return false
  const from = startOfUtcDay(day).toISOString()
  const to = dayAfter(startOfUtcDay(day)).toISOString()
  await sql`create table ${sql.id(name)} (like spans including defaults)`.execute(trx)
  // Until the attach commits, no span may reach the default partition: one of that day arriving
  // after the move would make the attach fail. Inserts into the other partitions go on.
  await sql`lock table ${sql.id(DEFAULT_SPAN_PARTITION)} in exclusive mode`.execute(trx)
  await sql`
    with moved as (delete from ${sql.id(DEFAULT_SPAN_PARTITION)} where start_time >= ${from}::timestamptz and start_time < ${to}::timestamptz returning *)
    insert into ${sql.id(name)} select * from moved`.execute(trx)
  await sql`alter table spans attach partition ${sql.id(name)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx)
  return true
}

/**
 * The projects that have a span in `partition`, by skipping through its primary key from one
 * project to the next: one index probe a project, however many rows it holds.
 */
export async function projectsInSpanPartition(db: Executor, partition: string): Promise<string[]> {
  const table = sql.id(partition)
  const { rows } = await sql<{ id: string }>`
    with recursive projects as (
      select min(project_id) as id from ${table}
      union all
      select (select min(project_id) from ${table} where project_id > p.id) from projects p where p.id is not null
    )
    select id from projects where id is not null`.execute(db)
  return rows.map((row) => row.id)
}

/**
 * Drops a day's partition, with its spans, in the caller's transaction. Dropping a partition takes
 * an ACCESS EXCLUSIVE lock on `spans` for an instant (DETACH … CONCURRENTLY, which would not, is
 * refused while a default partition exists), so it waits at most `lockTimeoutMs` for the queries
 * in its way, holding up the inserts queued behind it no longer than that: false when it gave up
 * (the next run tries again).
 */
export async function dropSpanPartition(trx: Executor, partition: string, lockTimeoutMs: number): Promise<boolean> {
  await sql`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(trx)
  try {
    await sql`savepoint drop_partition`.execute(trx)
    await sql`drop table ${sql.id(partition)}`.execute(trx)
    return true
  } catch (error) {
    if ((error as { code?: unknown }).code !== '55P03') throw error
    await sql`rollback to savepoint drop_partition`.execute(trx)
    return false
  }
}

/** Which of `ids` name a project that exists. */
export async function existingProjectIds(db: Executor, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db.selectFrom('projects').select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}
