import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import { DAY_MS, tilesTheUtcDay } from './metric-buckets.ts'
import { ACTIVE_DAY_DIMENSIONS } from './usage-rollup-figures.ts'

// Distinct users in points narrower than a day (a month's six-hourly line, a week's hourly one;
// issue 45 §3), from a row a user and day: its `hours` (migration 2026-12-06T1621) say which hours
// of the day held a trace of theirs, so a user counts in a point when one of its hours did. Each
// user is in a day's row once, so the counts need no sort; where every user's hourly rows were
// read and counted distinct (416,000 rows for a month in bench:dashboards).

/** What a count of users or sessions reads (metric-rollups.ts's RollupRead, which imports this file). */
export interface MemberCountRead {
  projectId: string
  /** One user or session only (a filter). */
  value?: string | undefined
  /** Whole UTC hours: the first point's start, the point's width, and the window's end. */
  startMs: number
  granularitySeconds: number
  to: Date
}

/** A point's count. */
export interface MemberCount {
  bucket: number
  group: null
  value: number
}

/** Whether read's users are counted from the hours of their rows of the day: points of whole hours tiling the UTC day, unfiltered. */
export function usersByHoursOfDay(read: MemberCountRead): boolean {
  const width = read.granularitySeconds * 1000
  return read.value === undefined && tilesTheUtcDay(read.granularitySeconds) && width < DAY_MS && read.startMs % width === 0
}

/** The distinct users of each point of [startMs, to) (usersByHoursOfDay says when): hours before `to` only, as the hourly rows are read. */
export async function userHourCells(db: Executor, read: MemberCountRead): Promise<MemberCount[]> {
  const hoursWide = read.granularitySeconds / 3600
  const to = sql`${read.to}::timestamptz`
  // Each day's users with a trace in each of its points (subscripts of `hours`, 1 for 00:00–01:00),
  // the hours from `to` on left out: a count a point, filtered, in one pass over the day's rows
  // (a row a user and point, joined and sorted, took half as long again).
  const counts = sql.join(Array.from({ length: 24 / hoursWide }, (_, k) =>
    sql`count(*) filter (where 0 < any(r.hours[${k * hoursWide + 1}:least(${(k + 1) * hoursWide}, d.hours_before_to)]))`))
  const { rows } = await sql<{ bucket: number; value: number }>`
    select floor((date_part('epoch', c.day) * 1000 + (k - 1) * ${read.granularitySeconds * 1000}::float8 - ${read.startMs}) / ${read.granularitySeconds * 1000})::int as bucket,
      c.counts[k]::float8 as value
    from (
      select d.day, array[${counts}] as counts
      from (
        select day, ceil(date_part('epoch', ${to} - day) / 3600)::int as hours_before_to
        from generate_series(${new Date(Math.floor(read.startMs / DAY_MS) * DAY_MS)}::timestamptz, ${to}, interval '1 day') as g(day) where day < ${to}
      ) d
      cross join lateral (
        select hours from usage_rollups
        where project_id = ${read.projectId} and dimension = ${ACTIVE_DAY_DIMENSIONS.user} and hour = d.day and value <> '' and hours is not null offset 0
      ) as r
      group by d.day
    ) c cross join generate_subscripts(c.counts, 1) as k
    where c.day + (k - 1) * ${`${hoursWide} hours`}::interval >= ${new Date(read.startMs)}`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: null, value: row.value }))
}
