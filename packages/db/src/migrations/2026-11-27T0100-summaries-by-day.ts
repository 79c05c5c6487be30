import { sql, type Kysely } from 'kysely'

// The summaries the writer keeps beside the spans become partitioned by UTC day, like `spans`
// (2026-11-26T2330), so that a day's expiry drops them instead of deleting them row by row — the
// row deletes were nearly all of its WAL (docs/benchmarks.md, day partitions):
//
// - `usage_rollups` by the day of each row's hour (its key already holds the hour).
// - `trace_summaries` and `session_summaries` by a new column, `fold_day`: the UTC day, by the
//   database's clock, on which the summariser last made or moved the row. Not by the trace's own
//   start: a trace's rows must be found by its id alone (its spans' times may be days apart, and
//   any day of 1970–2262), and probing every day's index for each new trace would cost more than
//   the summary itself. The summariser writes new rows only into today's partition, so an older
//   day gains no keys, and it finds what an older day holds through a filter of that day's keys.
//   Existing rows get the day of their time (a trace's start, a session's last trace), never
//   later than today.
//
// The primary keys gain the partition key (Postgres wants it in every unique key); only the
// summariser writes these rows, one fold at a time, so a trace or a session still has one row.
//
// Run while the services run: each table is copied under a SHARE lock (reads go on; the
// summariser's folds wait, and the spans they fold wait in summary_deltas, nothing lost), its
// indexes built, and the names swapped in a last instant. Frozen in time: never import
// application code here.

const dayMs = 86_400_000

interface Conversion {
  table: string
  /** The partition key, and for the summaries the expression that gives an existing row its day. */
  key: string
  foldDayOf?: string
  /** The primary key's columns, with the partition key. */
  primaryKey: string
}

const CONVERSIONS: Conversion[] = [
  { table: 'usage_rollups', key: 'hour', primaryKey: 'project_id, dimension, hour, value' },
  { table: 'trace_summaries', key: 'fold_day', foldDayOf: 'start_time', primaryKey: 'project_id, trace_id, fold_day' },
  { table: 'session_summaries', key: 'fold_day', foldDayOf: 'last_seen', primaryKey: 'project_id, session_id, fold_day' },
]

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows: [clock] } = await sql<{ today: string }>`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as today`.execute(db)
  const today = clock!.today
  for (const conversion of CONVERSIONS) await partition(db, conversion, today)
}

async function partition(db: Kysely<unknown>, { table, key, foldDayOf, primaryKey }: Conversion, today: string): Promise<void> {
  const { rows: [kind] } = await sql<{ kind: string }>`select relkind::text as kind from pg_class where oid = to_regclass(${table})`.execute(db)
  if (kind?.kind === 'p') return
  const copy = `${table}_by_day`
  // The folds wait from here to the end of the transaction; the queries do not.
  await sql`lock table ${sql.id(table)} in share mode`.execute(db)
  const dayOfRow = foldDayOf === undefined
    ? sql`(${sql.id(key)} at time zone 'UTC')::date`
    : sql`least((${sql.id(foldDayOf)} at time zone 'UTC')::date, ${today}::date)`
  if (foldDayOf === undefined) {
    await sql`create table ${sql.id(copy)} (like ${sql.id(table)} including defaults including constraints) partition by range (${sql.id(key)})`.execute(db)
  } else {
    await sql`
      create table ${sql.id(copy)} (like ${sql.id(table)} including defaults including constraints,
        fold_day date not null default ((now() at time zone 'UTC')::date))
      partition by range (fold_day)`.execute(db)
  }
  await sql`create table ${sql.id(`${table}_default`)} partition of ${sql.id(copy)} default`.execute(db)

  // A partition for every day that holds a row, and for yesterday to three days ahead.
  const { rows: stored } = await sql<{ day: string }>`select distinct to_char(${dayOfRow}, 'YYYY-MM-DD') as day from ${sql.id(table)}`.execute(db)
  const days = new Set(stored.map((row) => row.day))
  for (let offset = -1; offset <= 3; offset++) days.add(new Date(Date.parse(`${today}T00:00:00Z`) + offset * dayMs).toISOString().slice(0, 10))
  for (const day of days) {
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + dayMs).toISOString().slice(0, 10)
    const [from, to] = key === 'fold_day' ? [day, next] : [`${day}T00:00:00.000Z`, `${next}T00:00:00.000Z`]
    await sql`create table ${sql.id(`${table}_p${day.replaceAll('-', '')}`)} partition of ${sql.id(copy)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(db)
  }

  if (foldDayOf === undefined) await sql`insert into ${sql.id(copy)} select * from ${sql.id(table)}`.execute(db)
  else await sql`insert into ${sql.id(copy)} select t.*, ${dayOfRow} from ${sql.id(table)} t`.execute(db)

  // The same indexes, built on the filled partitions (faster than maintained row by row).
  await sql`alter table ${sql.id(copy)} add constraint ${sql.id(`${copy}_pkey`)} primary key (${sql.raw(primaryKey)})`.execute(db)
  const { rows: indexes } = await sql<{ name: string; definition: string }>`
    select indexname as name, indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename = ${table} and indexname <> ${`${table}_pkey`}`.execute(db)
  for (const index of indexes) {
    const onCopy = index.definition.replace(/^CREATE INDEX (\S+) ON (\S+) /, `CREATE INDEX ${index.name}_by_day ON ${copy} `)
    if (onCopy === index.definition) throw new Error(`unexpected index definition: ${index.definition}`)
    await sql.raw(onCopy).execute(db)
  }

  await sql`drop table ${sql.id(table)}`.execute(db)
  await sql`alter table ${sql.id(copy)} rename to ${sql.id(table)}`.execute(db)
  await sql`alter table ${sql.id(table)} rename constraint ${sql.id(`${copy}_pkey`)} to ${sql.id(`${table}_pkey`)}`.execute(db)
  for (const index of indexes) await sql`alter index ${sql.id(`${index.name}_by_day`)} rename to ${sql.id(index.name)}`.execute(db)
}

/** The primary keys as they were, without the partition key. */
const FLAT_PRIMARY_KEYS: Record<string, string> = {
  usage_rollups: 'project_id, dimension, hour, value',
  trace_summaries: 'project_id, trace_id',
  session_summaries: 'project_id, session_id',
}

/**
 * Back to plain tables: every row copied (fold_day left behind), with the same indexes. In the
 * caller's transaction, as kysely's migrator runs a down migration in one.
 */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { table } of CONVERSIONS) {
    const { rows: [kind] } = await sql<{ kind: string }>`select relkind::text as kind from pg_class where oid = to_regclass(${table})`.execute(db)
    if (kind?.kind !== 'p') continue
    const flat = `${table}_flat`
    await sql`create table ${sql.id(flat)} (like ${sql.id(table)} including defaults including constraints)`.execute(db)
    if (table !== 'usage_rollups') await sql`alter table ${sql.id(flat)} drop column fold_day`.execute(db)
    const { rows: columns } = await sql<{ name: string }>`
      select attname as name from pg_attribute where attrelid = ${flat}::regclass and attnum > 0 and not attisdropped order by attnum`.execute(db)
    const list = sql.join(columns.map((column) => sql.id(column.name)))
    await sql`insert into ${sql.id(flat)} (${list}) select ${list} from ${sql.id(table)}`.execute(db)
    await sql`alter table ${sql.id(flat)} add constraint ${sql.id(`${flat}_pkey`)} primary key (${sql.raw(FLAT_PRIMARY_KEYS[table]!)})`.execute(db)
    const { rows: indexes } = await sql<{ name: string; definition: string }>`
      select indexname as name, indexdef as definition from pg_indexes
      where schemaname = current_schema() and tablename = ${table} and indexname <> ${`${table}_pkey`}`.execute(db)
    await sql`drop table ${sql.id(table)}`.execute(db)
    await sql`alter table ${sql.id(flat)} rename to ${sql.id(table)}`.execute(db)
    await sql`alter table ${sql.id(table)} rename constraint ${sql.id(`${flat}_pkey`)} to ${sql.id(`${table}_pkey`)}`.execute(db)
    for (const index of indexes) await sql.raw(index.definition.replace(/ ON ONLY /, ' ON ')).execute(db)
  }
}
