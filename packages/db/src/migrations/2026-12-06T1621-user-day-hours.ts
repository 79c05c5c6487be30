import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// A month's users line (issue 45 §3: points of six hours at 30 days) counted distinct users over
// every user's hourly rows of the window (416,000 of them in bench:dashboards), sorted to count them.
// A user's row of the day ('user.day') now also holds their traces by UTC hour of the day (`hours`,
// 24 counts, the first of 00:00–01:00): the users of any points of whole hours within a day are
// counted from a row a user and day (the hours of a point hold a trace, or not), 14 times fewer
// rows there. Null on every other row, and on a row of the day of no trace (as 24 zeros). The
// summariser's fold adds to it as it adds to the hourly rows; erasure lowers it; the check
// compares it with the hourly rows. Run with the writers stopped.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table usage_rollups add column hours integer[]`.execute(db)
  await backfillUserDayHours(db)
}

/** The users' rows of the day's hours, from their hourly rows, a UTC day at a time (also what bench:dashboards loads them with). */
export async function backfillUserDayHours(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(hour), 'UTC') as first, max(hour) as last from usage_rollups where dimension = 'user'`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  for (let day = first ? new Date(first) : null; day !== null && last && day <= last; day = new Date(day.getTime() + 86_400_000)) {
    await sql`
      with h as (
        select project_id, value, date_part('hour', hour at time zone 'UTC')::int + 1 as i, traces
        from usage_rollups where dimension = 'user' and hour >= ${day} and hour < ${new Date(day.getTime() + 86_400_000)} and traces <> 0
      ),
      hours as (
        select project_id, value, array_agg(coalesce(h.traces, 0) order by k.i) as hours
        from (select distinct project_id, value from h) v cross join generate_series(1, 24) as k(i)
        left join h using (project_id, value, i)
        group by 1, 2
      )
      update usage_rollups u set hours = x.hours from hours x
      where u.project_id = x.project_id and u.dimension = 'user.day' and u.hour = ${day} and u.value = x.value`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table usage_rollups drop column hours`.execute(db)
}
