import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { bucketOf } from './metric-buckets.ts'
import type { MemberCount, MemberCountRead } from './user-hour-cells.ts'

// Distinct sessions in each point (issue 45 §3: a month's sessions line, 250,000 session rows in
// bench:dashboards), without reading or sorting a row a session and hour: a session whose row in
// session_figures lies in one hour (its bounds hold all its rows) has a trace in that hour alone,
// so it counts in the point of its first hour, read from the index by (project, first hour). The
// others, that span hours, are few (294 of the month's 250,000 there): they are taken back from
// their first hour's point and counted in each point where one of their rows (by key, in the hours
// or days their bounds hold) has a trace.

/**
 * The cells of `sessions` over the read's window, whose hours before `read.to` are settled
 * (session_figures holds their rows, migration 2026-12-06T1600); `spanning` is the rows that count
 * (hour, value) of the sessions that span hours or have rows after the settled ones (open_from),
 * made of spanningSessionRows; `open`, those of every session in the window's hours after the
 * settled ones, which session_figures does not hold. A session on both sides counts once a point.
 */
export async function sessionCountCells(db: Executor, read: MemberCountRead, spanning: RawBuilder<unknown>, open: RawBuilder<unknown> | undefined): Promise<MemberCount[]> {
  const bucket = bucketOf(read.startMs, read.granularitySeconds)
  const from = new Date(read.startMs)
  // Through the index on the sessions' lengths (project_id, last_hour - first_hour): the condition on
  // first_hour is written so that its own index cannot take it.
  const { rows: cells } = await sql<{ bucket: number; value: number }>`
    with spanning as (
      select session_id, first_hour, last_hour from session_figures
      where project_id = ${read.projectId} and last_hour - first_hour > interval '0' and last_hour >= ${from} and first_hour + interval '0' < ${read.to}
      union
      -- Through the partial index of the open sessions (those with rows after the settled hours).
      select session_id, first_hour, last_hour from session_figures
      where project_id = ${read.projectId} and open_from is not null and last_hour >= ${from} and first_hour < ${read.to}
    )
    select bucket, sum(n)::float8 as value from (
      select ${bucket} as bucket, count(*) as n
      from (select first_hour as hour from session_figures where project_id = ${read.projectId} and first_hour >= ${from} and first_hour < ${read.to}) f
      group by 1
      union all
      select ${bucket}, -count(*) from (select first_hour as hour from spanning where first_hour >= ${from}) s group by 1
      union all
      select bucket, count(*) from (select distinct ${bucket} as bucket, value from (${open === undefined ? spanning : sql`${spanning} union all ${open}`}) r) d group by 1
    ) c group by 1`.execute(db)
  return cells.map((cell) => ({ bucket: cell.bucket, group: null, value: cell.value }))
}

/**
 * (hour, value) of the rows of `dimension` ('session' or its rows of the day) in [from, to) that
 * count, of the sessions of the CTE `spanning`: each looked up by key in the hours (days) its bounds hold.
 */
export function spanningSessionRows(read: MemberCountRead, dimension: string, [from, to]: [Date, Date]): RawBuilder<unknown> {
  const step = dimension.endsWith('.day') ? sql`'1 day'::interval` : sql`'1 hour'::interval`
  return sql`
    select r.hour, r.value from spanning s
    cross join lateral generate_series(greatest(date_bin(${step}, s.first_hour, timestamptz '2000-01-01 00:00:00+00'), ${from}::timestamptz),
      least(s.last_hour, ${to}::timestamptz), ${step}) as h(at)
    cross join lateral (
      select hour, value from usage_rollups
      where project_id = ${read.projectId} and dimension = ${dimension} and hour = h.at and value = s.session_id collate "default" and traces > 0 offset 0
    ) as r
    where h.at < ${to}`
}
