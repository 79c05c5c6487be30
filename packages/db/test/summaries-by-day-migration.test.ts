import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Migrator, sql, type Migration } from 'kysely'
import type { Db } from '../src/index.ts'
import { migrations } from '../src/migrations/index.ts'
import { engines, migrateToBefore } from '../src/testing/index.ts'

// An installation with summaries migrates to day-partitioned summaries: every row kept as it was,
// each trace and session given the day of its time (never later than today) and put in that
// day's partition, the rollups in their hour's day, the indexes under the names they had; and back.

const THIS_MIGRATION = '2026-11-27T0100-summaries-by-day'
const TABLES = ['trace_summaries', 'session_summaries', 'usage_rollups'] as const
const dayMs = 86_400_000

const today = new Date(Math.floor(Date.now() / dayMs) * dayMs)
const isoDay = (date: Date) => date.toISOString().slice(0, 10)
const daysFromToday = (days: number, hours = 3) => new Date(today.getTime() + days * dayMs + hours * 3_600_000)

/** Traces and sessions 40 days ago, 5 days ago, today and (a client's clock ahead) in two days, with their hours' rollups. */
async function seedSummaries(db: Db): Promise<void> {
  const days = [-40, -5, 0, 2]
  for (const [i, day] of days.entries()) {
    for (let t = 0; t < 5; t++) {
      const start = daysFromToday(day, t)
      await sql`
        insert into trace_summaries (project_id, trace_id, name, has_root, start_time, end_time, duration_us, span_count, error_count, models,
          input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id, text_filter)
        values ('p', ${`${i}${t}`.padStart(32, '0')}, 'chat', true, ${start}, ${new Date(start.getTime() + 1000)}, 1000000, 2, 0, '{gpt-4o}',
          10, 5, 15, 0.25, ${`session-${i}`}, 'u', B'1010')`.execute(db)
      await sql`
        insert into usage_rollups (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
        values ('p', 'all', ${new Date(Math.floor(start.getTime() / 3_600_000) * 3_600_000)}, '', 1, 2, 0, 10, 5, 0.25, array_fill(0, array[128]))`.execute(db)
    }
    const last = daysFromToday(day, 4)
    await sql`
      insert into session_summaries (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd)
      values ('p', ${`session-${i}`}, 'u', ${daysFromToday(day, 0)}, ${new Date(last.getTime() + 1000)}, 5, 75, 1.25)`.execute(db)
  }
}

async function rowsOf(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`select (to_jsonb(t) - 'fold_day' - 'words_in_blocks')::text as row from ${sql.id(table)} t`.execute(db)
  return rows.map((r) => r.row).sort()
}

async function indexNames(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = ${table} order by 1`.execute(db)
  return rows.map((r) => r.name)
}

async function isPartitioned(db: Db, table: string): Promise<boolean> {
  const { rows } = await sql<{ kind: string }>`select relkind::text as kind from pg_class where oid = to_regclass(${table})`.execute(db)
  return rows[0]?.kind === 'p'
}

for (const engine of engines) {
  describe(`summaries-by-day migration on ${engine.name}`, { timeout: 120_000 }, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open({ migrated: false })))
    after(() => drop())

    it('partitions the summaries with every row kept, each in its day, and goes back', async () => {
      await migrateToBefore(db, THIS_MIGRATION)
      await seedSummaries(db)
      const before = Object.fromEntries(await Promise.all(TABLES.map(async (table) => [table, { rows: await rowsOf(db, table), indexes: await indexNames(db, table) }])))

      // This migration alone: later ones add columns of their own (and backfill them).
      const everyVersion = new Migrator({ db, provider: { getMigrations: async () => migrations as Record<string, Migration> } })
      assert.equal((await everyVersion.migrateTo(THIS_MIGRATION)).error, undefined)
      for (const table of TABLES) {
        assert.equal(await isPartitioned(db, table), true, table)
        assert.deepEqual(await rowsOf(db, table), before[table].rows, `${table} keeps its rows`)
        assert.deepEqual(await indexNames(db, table), before[table].indexes, `${table} keeps its index names`)
      }
      // A trace's and a session's day is that of its time, at the latest today; every row sits in its day's partition.
      const { rows: traceDays } = await sql<{ start: string; fold_day: string; partition: string }>`
        select to_char(start_time at time zone 'UTC', 'YYYY-MM-DD') as start, fold_day::text as fold_day, tableoid::regclass::text as partition
        from trace_summaries`.execute(db)
      for (const row of traceDays) {
        assert.equal(row.fold_day, row.start > isoDay(today) ? isoDay(today) : row.start)
        assert.equal(row.partition, `trace_summaries_p${row.fold_day.replaceAll('-', '')}`)
      }
      const { rows: sessionDays } = await sql<{ last: string; fold_day: string; partition: string }>`
        select to_char(last_seen at time zone 'UTC', 'YYYY-MM-DD') as last, fold_day::text as fold_day, tableoid::regclass::text as partition
        from session_summaries`.execute(db)
      assert.equal(sessionDays.length, 4)
      for (const row of sessionDays) {
        assert.equal(row.fold_day, row.last > isoDay(today) ? isoDay(today) : row.last)
        assert.equal(row.partition, `session_summaries_p${row.fold_day.replaceAll('-', '')}`)
      }
      const { rows: rollupPartitions } = await sql<{ partition: string; day: string }>`
        select distinct tableoid::regclass::text as partition, to_char(hour at time zone 'UTC', 'YYYYMMDD') as day from usage_rollups`.execute(db)
      for (const row of rollupPartitions) assert.equal(row.partition, `usage_rollups_p${row.day}`)
      // The keys the summariser upserts on hold.
      await sql`
        insert into usage_rollups (project_id, dimension, hour, value, traces, spans, errors, latency)
        select project_id, dimension, hour, value, 1, 1, 0, latency from usage_rollups
        on conflict (project_id, dimension, hour, value) do update set traces = usage_rollups.traces + excluded.traces`.execute(db)
      const { rows: [sum] } = await sql<{ traces: number }>`select sum(traces)::int as traces from usage_rollups`.execute(db)
      assert.equal(sum!.traces, 40)

      const { error: downError } = await everyVersion.migrateTo(Object.keys(migrations).filter((name) => name < THIS_MIGRATION).at(-1)!)
      assert.equal(downError, undefined)
      await sql`update usage_rollups set traces = traces - 1`.execute(db)
      for (const table of TABLES) {
        assert.equal(await isPartitioned(db, table), false, table)
        assert.deepEqual(await rowsOf(db, table), before[table].rows, `${table} back as it was`)
        assert.deepEqual(await indexNames(db, table), before[table].indexes)
      }
    })
  })
}
