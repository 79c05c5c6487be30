import { sql } from 'kysely'
import { inTransaction, type Executor } from './executor.ts'

// The tables that grow with traffic, partitioned by UTC day (docs/operations.md#partitions), so
// that retention drops a day instead of deleting it row by row:
//
// - `spans` by the day each span started;
// - `usage_rollups` by the day of each row's hour;
// - `trace_summaries` and `session_summaries` by the day the summariser last made the row
//   (`fold_day`, the database's clock). New and rewritten rows only ever go to today's partition,
//   so a partition two days old no longer gains rows: the summariser knows which keys it holds
//   once and for all (sealed-summary-days.ts in @tracewell/write-path), and finds a trace or a
//   session without probing every day's index;
// - `trace_text_blocks` by the day of each block (the start of its traces).
//
// `<table>_pYYYYMMDD` holds one day, `<table>_default` any row whose day has no partition. Made
// ahead of need by the writer (on start and every hour) and by the janitor (every run); dropped by
// the janitor once every project's retention has passed their day.

const dayMs = 86_400_000

export const DAY_PARTITIONED_TABLES = ['spans', 'trace_summaries', 'session_summaries', 'usage_rollups', 'trace_text_blocks'] as const
export type DayPartitionedTable = (typeof DAY_PARTITIONED_TABLES)[number]

/** Each table's partition key and its type (a day of a `date` is written without its time). */
const PARTITION_KEYS: Record<DayPartitionedTable, { column: string; type: 'timestamptz' | 'date' }> = {
  spans: { column: 'start_time', type: 'timestamptz' },
  trace_summaries: { column: 'fold_day', type: 'date' },
  session_summaries: { column: 'fold_day', type: 'date' },
  usage_rollups: { column: 'hour', type: 'timestamptz' },
  trace_text_blocks: { column: 'block', type: 'timestamptz' },
}

/** Days after today made ahead of need (today and yesterday are always made too). */
export const PARTITION_DAYS_AHEAD = 3

/**
 * The advisory lock that serialises making partitions across writers and janitors (one
 * transaction each). Its bytes spell "tw-parts" in ASCII; no other Tracewell lock may use it.
 */
const PARTITION_LOCK_KEY = 0x74772d7061727473n

export interface DayPartition {
  table: DayPartitionedTable
  name: string
  /** The UTC day it holds, [day, day + 24 h); null for the default partition. */
  day: Date | null
}

export const startOfUtcDay = (instant: Date): Date => new Date(Math.floor(instant.getTime() / dayMs) * dayMs)
export const dayAfter = (day: Date): Date => new Date(day.getTime() + dayMs)
/** A day as `date` text: YYYY-MM-DD. */
export const isoDay = (day: Date): string => startOfUtcDay(day).toISOString().slice(0, 10)
export const defaultPartitionName = (table: DayPartitionedTable): string => `${table}_default`
export const partitionName = (table: DayPartitionedTable, day: Date): string => `${table}_p${isoDay(day).replaceAll('-', '')}`

/** The day a partition of `table` holds, from its name; null for the default partition. */
export function dayOfPartition(table: DayPartitionedTable, name: string): Date | null {
  const match = new RegExp(`^${table}_p(\\d{4})(\\d{2})(\\d{2})$`).exec(name)
  return match ? new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`) : null
}

/** A bound of a day in the table's partition key type. */
function bound(table: DayPartitionedTable, day: Date): string {
  return PARTITION_KEYS[table].type === 'date' ? isoDay(day) : startOfUtcDay(day).toISOString()
}

/** Every partition of `table`, the default first, then by day. */
export async function listDayPartitions(db: Executor, table: DayPartitionedTable): Promise<DayPartition[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${table}::regclass`.execute(db)
  const partitions = rows.map(({ name }) => ({ table, name, day: dayOfPartition(table, name) }))
  return partitions.sort((a, b) => (a.day?.getTime() ?? -Infinity) - (b.day?.getTime() ?? -Infinity))
}

/**
 * Makes the partition of each day from yesterday to `daysAhead` days after today that is missing,
 * in every day-partitioned table, each in a transaction of its own; answers the names it made.
 * Cheap when none is missing (a catalog query a table), so callers may call it often.
 */
export async function ensureDayPartitions(db: Executor, now = new Date(), daysAhead = PARTITION_DAYS_AHEAD): Promise<string[]> {
  const today = startOfUtcDay(now)
  const made: string[] = []
  for (const table of DAY_PARTITIONED_TABLES) {
    const existing = new Set((await listDayPartitions(db, table)).map((partition) => partition.name))
    for (let offset = -1; offset <= daysAhead; offset++) {
      const day = new Date(today.getTime() + offset * dayMs)
      if (existing.has(partitionName(table, day))) continue
      if (await inTransaction(db, (trx) => createDayPartition(trx, table, day))) made.push(partitionName(table, day))
    }
  }
  return made
}

/**
 * Makes one day's partition of `table` in the caller's transaction, unless another process made
 * it first (false). The default partition's rows of that day move into it in the same
 * transaction, since Postgres refuses to attach a range the default partition holds rows of; with
 * the partitions made ahead of need it holds few or none. Made apart and then attached: ATTACH
 * takes a lock on the table that inserts do not wait for, where CREATE TABLE … PARTITION OF would
 * stop them.
 */
export async function createDayPartition(trx: Executor, table: DayPartitionedTable, day: Date): Promise<boolean> {
  const name = partitionName(table, day)
  await sql`select pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`.execute(trx)
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(trx)
  if (rows[0]?.found) return false
  const { column, type } = PARTITION_KEYS[table]
  const from = bound(table, day)
  const to = bound(table, dayAfter(startOfUtcDay(day)))
  const fallback = sql.id(defaultPartitionName(table))
  await sql`create table ${sql.id(name)} (like ${sql.id(table)} including defaults including storage including compression)`.execute(trx)
  // Until the attach commits, no row may reach the default partition: one of that day arriving
  // after the move would make the attach fail. Inserts into the other partitions go on.
  await sql`lock table ${fallback} in exclusive mode`.execute(trx)
  await sql`
    with moved as (
      delete from ${fallback} where ${sql.id(column)} >= cast(${from} as ${sql.raw(type)}) and ${sql.id(column)} < cast(${to} as ${sql.raw(type)})
      returning *)
    insert into ${sql.id(name)} select * from moved`.execute(trx)
  await sql`alter table ${sql.id(table)} attach partition ${sql.id(name)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx)
  return true
}

/**
 * The projects that have a row in `partition`, by skipping through its primary key (which every
 * day-partitioned table leads with project_id) from one project to the next: one index probe a
 * project, however many rows it holds.
 */
export async function projectsInPartition(db: Executor, partition: string): Promise<string[]> {
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
 * Locks a day-partitioned table, and so every partition of it, against every other statement until
 * the caller's transaction ends, waiting at most `lockTimeoutMs` for the transactions in its way:
 * false when it gave up. Taken before a drop decides anything, so that what it then reads of a
 * partition is all it will ever hold: a writer's transaction that had inserted into the partition
 * has committed (and is seen) or has not begun. The parent, not the partition: DROP TABLE of a
 * partition locks its parent first, and so do inserts, so taking the partition's lock first could
 * deadlock with a writer between the two. The ACCESS EXCLUSIVE lock the drop needs anyway.
 */
export async function lockDayPartitionedTable(trx: Executor, table: DayPartitionedTable, lockTimeoutMs: number): Promise<boolean> {
  await sql`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(trx)
  try {
    await sql`savepoint lock_partitioned_table`.execute(trx)
    await sql`lock table ${sql.id(table)} in access exclusive mode`.execute(trx)
    return true
  } catch (error) {
    if ((error as { code?: unknown }).code !== '55P03') throw error
    await sql`rollback to savepoint lock_partitioned_table`.execute(trx)
    return false
  }
}

/**
 * Deletes the rows of a day of usage_rollups whose partition is about to be dropped that triggers
 * keep other tables' figures by, so that those lose them too (a drop fires no trigger): the
 * 'session' rows (session_figures) and the users' rows of the day (user_week_figures).
 */
export async function deleteTriggerKeptRollupsOf(trx: Executor, day: Date): Promise<void> {
  await sql`
    delete from usage_rollups where dimension = 'session' and value <> '' and hour >= ${day} and hour < ${dayAfter(day)}`.execute(trx)
  await sql`delete from usage_rollups where dimension = 'user.day' and hour >= ${day} and hour < ${dayAfter(day)}`.execute(trx)
}

/**
 * Drops a day's partition, with its rows, in the caller's transaction. Dropping a partition takes
 * an ACCESS EXCLUSIVE lock on its table for an instant (DETACH … CONCURRENTLY, which would not, is
 * refused while a default partition exists), so it waits at most `lockTimeoutMs` for the queries
 * in its way, holding up the inserts queued behind it no longer than that: false when it gave up
 * (the next run tries again).
 */
export async function dropPartition(trx: Executor, partition: string, lockTimeoutMs: number): Promise<boolean> {
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
