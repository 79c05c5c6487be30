import { sql } from 'kysely'
import type { Executor } from './executor.ts'
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

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** Whether read's users are counted from the hours of their rows of the day: points of whole hours tiling the UTC day, unfiltered. */
export function usersByHoursOfDay(read: MemberCountRead): boolean {
  const width = read.granularitySeconds * 1000
  return read.value === undefined && width % HOUR_MS === 0 && DAY_MS % width === 0 && width < DAY_MS && read.startMs % width === 0
}

/** The distinct users of each point of [startMs, to) (usersByHoursOfDay says when): hours before `to` only, as the hourly rows are read. */
export async function userHourCells(db: Executor, read: MemberCountRead): Promise<MemberCount[]> {
  const hoursWide = read.granularitySeconds / 3600
  // The points of a day as ranges of its hours, subscripts of `hours` (1 for 00:00–01:00).
  const points = sql.join(Array.from({ length: 24 / hoursWide }, (_, k) => sql`(${k * hoursWide + 1}::int, ${(k + 1) * hoursWide}::int)`))
  const to = sql`${read.to}::timestamptz`
  // A day's row read once (offset 0), then matched with each of its points.
  const { rows } = await sql<{ bucket: number; value: number }>`
    select floor((date_part('epoch', x.day) * 1000 + (p.first - 1) * ${HOUR_MS}::float8 - ${read.startMs}) / ${read.granularitySeconds * 1000})::int as bucket,
      count(*)::float8 as value
    from (
      select d.day, r.hours, ceil(date_part('epoch', ${to} - d.day) / 3600)::int as hours_before_to
      from generate_series(${new Date(Math.floor(read.startMs / DAY_MS) * DAY_MS)}::timestamptz, ${to}, interval '1 day') as d(day)
      cross join lateral (
        select hours from usage_rollups
        where project_id = ${read.projectId} and dimension = ${ACTIVE_DAY_DIMENSIONS.user} and hour = d.day and value <> '' and hours is not null offset 0
      ) as r
      where d.day < ${to}
      offset 0
    ) x cross join (values ${points}) as p(first, last)
    where x.day + (p.first - 1) * interval '1 hour' >= ${new Date(read.startMs)} and 0 < any(x.hours[p.first:least(p.last, x.hours_before_to)])
    group by 1`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: null, value: row.value }))
}
