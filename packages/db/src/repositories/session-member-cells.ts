import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { byCodePoint } from './code-point-order.ts'
import { bucketOf, onWholeHours, tilesTheUtcDay, timeBucketOf } from './metric-buckets.ts'
import { spanningSessionRows } from './session-count-cells.ts'
import { builtMemberDays, groupMemberCells } from './group-member-cells.ts'
import { rollupCells } from './metric-rollups.ts'
import { sessionsSettledUntil } from './session-ranking.ts'
import { notTracewellTrace } from './tracewell-calls.ts'

// Users or sessions by session (issue 45 §3): every session is its own group, 250,000 a month in
// bench:dashboards, of which the series keeps the 50 largest by the sum of their points. Counting
// every session's members in every point from the summaries read the month's 417,000 traces
// (0.9 s). Here the 50 are found first and only their traces are read:
//
// - sessions: a settled session whose row in session_figures lies inside the window and in one
//   point counts 1 there (its bounds hold every row it has); only the first 50 of those in code
//   point order can be kept, read in the primary key's order. The others (across points, across the
//   window's edges) are few: those that span hours, found and counted from their hourly rows as
//   sessionCountCells does. The hours after the settled ones, from their traces.
// - users: no row says how many users a session has, but never more than its traces. The sessions
//   are taken by traces (the rollups' ranking, the same order), their users counted from their
//   traces, until the 50th's count is more than the next session's traces could reach. The users
//   of the traces without a session (a group too, often the largest), from a row a settled day.
//
// Exact as the summaries count them (the caller reads those when this declines: undefined), but
// for a trace whose root is a user's service yet holds a span of Tracewell's own service, which
// the rollups leave out (the sessions' hourly rows, and the traces that bound users).

export interface SessionMemberRead {
  projectId: string
  metric: 'users' | 'sessions'
  /** Whole hours: the first point's start, the points' width (a divisor of the UTC day), the end. */
  startMs: number
  granularitySeconds: number
  to: Date
  maxGroups: number
}

export interface SessionMemberCell {
  bucket: number
  group: string | null
  value: number
}

/** Past this many sessions' users counted from their traces, the summaries' own read is as fast. */
const MAX_COUNTED = 2_000

/**
 * Whether this read answers: users or sessions by session, unfiltered, in points of whole hours
 * that tile the UTC day (so that none straddles the settled hours' end, a midnight), ending on an
 * hour or now.
 */
export function sessionMembersAnswer(metric: string, groupBy: string | undefined, filtered: boolean, startMs: number, granularitySeconds: number, to: Date): boolean {
  return (metric === 'users' || metric === 'sessions') && groupBy === 'session' && !filtered && tilesTheUtcDay(granularitySeconds) && onWholeHours(startMs, granularitySeconds, to)
}

/** The cells of the groups the series may keep, or undefined where the summaries are read instead. */
export async function sessionMemberCells(db: Executor, read: SessionMemberRead): Promise<SessionMemberCell[] | undefined> {
  return read.metric === 'sessions' ? sessionCells(db, read) : userCells(db, read)
}

/** Members counted in each point from the traces of [from, to) meeting `which`, by session (null: none). */
async function countedFromTraces(db: Executor, read: SessionMemberRead, [from, to]: [Date, Date], which: RawBuilder<unknown>): Promise<SessionMemberCell[]> {
  const member = read.metric === 'users' ? sql`t.user_id` : sql`t.session_id`
  const { rows } = await sql<{ bucket: number; grp: string | null; value: number }>`
    select ${timeBucketOf(read.startMs, read.granularitySeconds)(sql`t.start_time`)} as bucket, t.session_id as grp, count(distinct ${member})::float8 as value
    from trace_summaries t
    where t.project_id = ${read.projectId} and t.start_time >= ${from} and t.start_time < ${to} and ${notTracewellTrace} and ${which}
    group by 1, 2`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

/** Counted from the traces of these sessions only (the index by session). */
const ofSessions = (ids: string[]) => sql`t.session_id = any(${ids}::text[])`

async function sessionCells(db: Executor, read: SessionMemberRead): Promise<SessionMemberCell[]> {
  const from = new Date(read.startMs)
  const width = read.granularitySeconds * 1000
  // The settled hours' rows answer the points before the one holding their end (a midnight, which
  // these points do not straddle); that point on, the traces do, so that no point is counted twice.
  const settledUntil = (await sessionsSettledUntil(db)).getTime()
  const boundary = read.startMs + Math.max(0, Math.floor((settledUntil - read.startMs) / width)) * width
  const settledEnd = new Date(Math.min(read.to.getTime(), boundary))
  const cells: SessionMemberCell[] = []
  if (from < settledEnd) {
    const inOnePoint = sql`first_hour >= ${from} and last_hour < ${settledEnd}
      and date_bin(${read.granularitySeconds}::float8 * interval '1 second', first_hour, ${from}::timestamptz)
        = date_bin(${read.granularitySeconds}::float8 * interval '1 second', last_hour, ${from}::timestamptz)`
    // The first of the one-point sessions in code point order (session_id is collate "C"), and
    // every open one: its hours after the settled ones may add points. Its row's figures are of
    // the settled hours only, all before settledEnd when its bounds are.
    const { rows: ones } = await sql<{ session_id: string; first_hour: Date }>`
      (select session_id, first_hour from session_figures
       where project_id = ${read.projectId} and traces > 0 and ${inOnePoint} order by session_id limit ${read.maxGroups})
      union
      select session_id, first_hour from session_figures
      where project_id = ${read.projectId} and open_from is not null and open_from < ${read.to} and traces > 0 and ${inOnePoint}`.execute(db)
    for (const one of ones) cells.push({ bucket: Math.floor((one.first_hour.getTime() - read.startMs) / width), group: one.session_id, value: 1 })
    // The others, through the index on the sessions' lengths as sessionCountCells finds those that
    // span hours: 1 in each point where one of their hourly rows (by key, in the hours their row
    // bounds) has a trace, a few lookups a session where its traces were 35, one a day partition.
    const { rows: spanning } = await sql<{ bucket: number; value: string }>`
      with spanning as (
        select session_id, first_hour, last_hour from session_figures
        where project_id = ${read.projectId} and last_hour - first_hour > interval '0' and last_hour >= ${from} and first_hour + interval '0' < ${settledEnd}
          and traces > 0 and not (${inOnePoint})
      )
      select distinct ${bucketOf(read.startMs, read.granularitySeconds)} as bucket, value
      from (${spanningSessionRows(read, 'session', [from, settledEnd])}) r`.execute(db)
    for (const row of spanning) cells.push({ bucket: row.bucket, group: row.value, value: 1 })
    // Traces without a session count no session: a group of zeros, kept only below 50 sessions.
    if ((await tracesWithoutSession(db, read, [from, settledEnd])) > 0) cells.push({ bucket: 0, group: null, value: 0 })
  }
  if (settledEnd < read.to) cells.push(...await countedFromTraces(db, read, [settledEnd, read.to], sql`true`))
  return cells
}

/** The traces without a session started in [from, to), from their rows ('' in the sessions' rows) looked up hour by hour. */
async function tracesWithoutSession(db: Executor, read: SessionMemberRead, [from, to]: [Date, Date]): Promise<number> {
  const { rows: [row] } = await sql<{ traces: number }>`
    select coalesce(sum(r.traces), 0)::float8 as traces
    from generate_series(${from}::timestamptz, ${to}::timestamptz, interval '1 hour') as h(at)
    cross join lateral (
      select traces from usage_rollups
      where project_id = ${read.projectId} and dimension = 'session' and hour = h.at and value = '' and traces > 0 offset 0
    ) r
    where h.at < ${to}`.execute(db)
  return row?.traces ?? 0
}

interface Ranked {
  group: string | null
  total: number
}

/** Largest first, ties in code point order, none last: toSeries' order. */
const rankOrder = (a: Ranked, b: Ranked): number => b.total - a.total || byCodePoint(a.group, b.group)

async function userCells(db: Executor, read: SessionMemberRead): Promise<SessionMemberCell[] | undefined> {
  const window: [Date, Date] = [new Date(read.startMs), read.to]
  for (let taken = read.maxGroups; taken <= MAX_COUNTED; taken *= 4) {
    const byTraces = await sessionsByTraces(db, read, taken)
    const sessions = byTraces.filter((session) => session.group !== null)
    const cells = sessions.length === 0 ? [] : await countedFromTraces(db, read, window, ofSessions(sessions.map((session) => session.group as string)))
    const counted = ranked(cells)
    const last = counted[read.maxGroups - 1]
    const next = byTraces.length < taken ? undefined : byTraces[byTraces.length - 1]!
    // A session not taken has no more traces than the last taken; as many, it comes after it in code point order.
    const settled = next === undefined || (last !== undefined && (last.total > next.total || (last.total === next.total && (next.group === null || byCodePoint(last.group, next.group) <= 0))))
    if (!settled) continue
    // Traces without a session: their users, a group of their own (last of equals), unless it cannot reach the 50th.
    const withoutOne = await tracesWithoutSession(db, read, window)
    if (withoutOne > 0 && (last === undefined || withoutOne > last.total)) cells.push(...await usersWithoutSession(db, read))
    return cells
  }
  return undefined
}

/**
 * The users of the traces without a session in each point: of the settled days built, from their
 * rows in group_member_days (migration 2026-12-07T0400); of the others (today, yesterday), from the
 * summaries.
 */
async function usersWithoutSession(db: Executor, read: SessionMemberRead): Promise<SessionMemberCell[]> {
  const byDay = { projectId: read.projectId, metric: 'users' as const, dimension: 'session', startMs: read.startMs, granularitySeconds: read.granularitySeconds, to: read.to }
  const { days, rest } = await builtMemberDays(db, byDay)
  const cells: SessionMemberCell[] = []
  if (days.length > 0) {
    const { rows } = await sql<{ bucket: number; grp: string | null; value: number }>`${groupMemberCells(byDay, days)}`.execute(db)
    cells.push(...rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value })))
  }
  for (const [from, to] of rest) cells.push(...await countedFromTraces(db, read, [new Date(from), new Date(to)], sql`t.session_id is null`))
  return cells
}

/** The sessions with the most traces in the window, in that order (the rollups' ranking), with their traces. */
async function sessionsByTraces(db: Executor, read: SessionMemberRead, taken: number): Promise<Ranked[]> {
  const cells = await rollupCells(db, {
    projectId: read.projectId, metric: 'traces', dimension: 'session', grouped: true, maxGroups: taken,
    startMs: read.startMs, granularitySeconds: read.granularitySeconds, to: read.to,
  })
  return ranked(cells)
}

/** Each group's total over its points, in toSeries' order (rankOrder). */
function ranked(cells: ReadonlyArray<{ bucket: number | null; group: string | null; value: number | null }>): Ranked[] {
  const totals = new Map<string | null, number>()
  for (const cell of cells) if (cell.bucket !== null) totals.set(cell.group, (totals.get(cell.group) ?? 0) + (cell.value ?? 0))
  return [...totals].map(([group, total]) => ({ group, total })).sort(rankOrder)
}
