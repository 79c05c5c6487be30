import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// Dashboards' users and sessions over days (issue 45 §3): distinct users counted over a week read
// every user's hourly row (1,000 users × 168 hours in bench:dashboards). Who was active on a UTC
// day is now kept beside the hourly rows, in usage_rollups itself (so that retention's partition
// drops, erasures and the summariser's fold treat it as they treat an hour): dimension 'user.day'
// or 'session.day', `hour` the day's start, `value` the user or session ('' for none), `traces`
// the traces that started on the day under it, counted as the hourly 'user' and 'session' rows
// count them (Tracewell's own traces under their user, never under a session). Every other
// figure stays 0, null or empty: these rows say who, not how much.
//
// The rows of stored traces are summed from the hourly rows, a UTC day at a time; run it with the
// writers stopped, as the other rollup migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await backfillActiveDays(db)
}

/** The rows of who was active on each day, from the hourly rows (also what bench:dashboards loads them with). */
export async function backfillActiveDays(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(hour), 'UTC') as first, max(hour) as last from usage_rollups where dimension in ('user', 'session')`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  for (let day = first ? new Date(first) : null; day !== null && last && day <= last; day = new Date(day.getTime() + 86_400_000)) {
    await sql`
      insert into usage_rollups as u (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency, error_traces, durations)
      select project_id, dimension || '.day', ${day}::timestamptz, value, sum(traces)::integer, 0, 0, null, null, null, '{}', 0, '{}'
      from usage_rollups
      where dimension in ('user', 'session') and hour >= ${day} and hour < ${new Date(day.getTime() + 86_400_000)}
      group by project_id, dimension, value
      having sum(traces) > 0
      on conflict (project_id, dimension, hour, value) do update set traces = excluded.traces`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from usage_rollups where dimension in ('user.day', 'session.day')`.execute(db)
}
