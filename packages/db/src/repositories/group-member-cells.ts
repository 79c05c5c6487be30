import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { DAY_MS, HOUR_MS, tilesTheUtcDay } from './metric-buckets.ts'

// Distinct users or sessions by model, vendor, service, prompt, tag or user in points of whole hours
// tiling the UTC day (a month's six-hourly line; issue 45 §3), from a row a settled day and value
// of group_member_days (migration 2026-12-07T0100): the members whose mask of hours meets the
// point's count in it. Each member is in its day's row once, so the counts need no distinct.
// The days not built (today, yesterday, a day changed since it was built) are left to the caller,
// which reads them from the summaries.

export const MEMBER_GROUP_DIMENSIONS: ReadonlySet<string> = new Set(['model', 'vendor', 'service', 'prompt', 'tag', 'user'])

/** Every dimension of the rows: by session, those of the traces without one only (migration 2026-12-07T0400), read by session-member-cells.ts. */
export const GROUP_MEMBER_DAY_DIMENSIONS: readonly string[] = [...MEMBER_GROUP_DIMENSIONS, 'session']

export interface GroupMemberRead {
  projectId: string
  metric: 'users' | 'sessions'
  dimension: string
  /** The first point's start (a multiple of the width), the width, and the window's end. */
  startMs: number
  granularitySeconds: number
  to: Date
}

/** Whether group_member_days answer the read's shape: points of whole hours that tile the UTC day. */
export function groupMembersAnswer(metric: string, groupBy: string | undefined, filtered: boolean, granularitySeconds: number): boolean {
  return (metric === 'users' || metric === 'sessions') && groupBy !== undefined && !filtered && MEMBER_GROUP_DIMENSIONS.has(groupBy) && tilesTheUtcDay(granularitySeconds)
}

/**
 * The built days (their starts) wholly inside the window, and the ranges [from, to) of the window
 * (ms) they leave, which the caller reads elsewhere.
 */
export async function builtMemberDays(db: Executor, read: GroupMemberRead): Promise<{ days: Date[]; rest: Array<[number, number]> }> {
  const end = read.to.getTime()
  const { rows } = await sql<{ day: Date }>`
    select day from group_member_day_marks
    where project_id = ${read.projectId} and built and day >= ${new Date(Math.floor(read.startMs / DAY_MS) * DAY_MS)} and day < ${new Date(Math.floor(end / DAY_MS) * DAY_MS)}
    order by day`.execute(db)
  const rest: Array<[number, number]> = []
  let at = read.startMs
  for (const day of rows.map((row) => row.day.getTime())) {
    if (day > at) rest.push([at, day])
    at = Math.max(at, day + DAY_MS)
  }
  if (at < end) rest.push([at, end])
  return { days: rows.map((row) => row.day), rest }
}

/** The cells (bucket, grp, value) of `days` (built, wholly inside the window): the points from the window's start on. */
export function groupMemberCells(read: GroupMemberRead, days: Date[]): RawBuilder<unknown> {
  const width = read.granularitySeconds * 1000
  const hoursWide = width / HOUR_MS
  const masks = Array.from({ length: DAY_MS / width }, (_, k) => ((1 << hoursWide) - 1) << (k * hoursWide))
  const counts = sql.join(masks.map((mask) => sql`coalesce(sum(n) filter (where m & ${mask}::int <> 0), 0)`))
  const [memberMasks, memberCounts] = read.metric === 'users' ? [sql.ref('g.user_masks'), sql.ref('g.user_counts')] : [sql.ref('g.session_masks'), sql.ref('g.session_counts')]
  // A point of a value whose traces all lack a member counts 0, as the summaries' count(distinct) does.
  return sql`
    select * from (
      select floor((date_part('epoch', g.day) * 1000 + (k - 1) * ${width}::float8 - ${read.startMs}) / ${width})::int as bucket, g.value as grp, c.counts[k]::float8 as value
      from group_member_days g
      cross join lateral (select array[${counts}] as counts from unnest(${memberMasks}, ${memberCounts}) as u(m, n)) as c
      cross join generate_subscripts(c.counts, 1) as k
      where g.project_id = ${read.projectId} and g.dimension = ${read.dimension} and g.day = any(${days}::timestamptz[])
        and g.hours & (${`{${masks.join(',')}}`}::int[])[k] <> 0
    ) c where bucket >= 0`
}
