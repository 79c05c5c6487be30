import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'

// The top sessions of a window by a figure (issue 45 §3: dashboards by session over 30 days), from
// a row a session (session_figures, migration 2026-12-06T1500) instead of every session's hourly
// rows of the window. That row holds the session's rows of the settled hours only, those before
// session_figures_settled's boundary (migration 2026-12-06T1600: the fold does not write it for the
// current day's). A session whose settled rows all lie in the window and that has no row in the
// window's hours after the boundary has its row's figures as the window's: the top of each UTC day
// of first hours, read from an index in that order (a few rows a day). The others are few, or
// lie in the hours after the boundary (a day's), and their figures are computed from their hourly
// rows: the sessions that may cross the window's start or end (those that began up to the longest
// session's length before it) and the session '' (traces without one) from every hour of the
// window, as before; the sessions with a row after the boundary (the open sessions) from those
// rows and their settled rows, in the hours their row bounds. The three merged rank as the hourly
// rows alone would.

/** The metrics whose sessions' rows rank: each has its function of a day's top sessions (migration 2026-12-06T1500). */
const RANKED: ReadonlySet<string> = new Set([
  'cost', 'tokens', 'input_tokens', 'output_tokens', 'traces', 'spans', 'error_rate', 'latency_p50', 'latency_p95', 'latency_p99',
])

export interface SessionWindow {
  projectId: string
  metric: string
  /** The window [from, to): its start a whole hour; hourly rows count when their hour is before `to`. */
  from: Date
  to: Date
  maxGroups: number
  /**
   * The settled hours' end (sessionsSettledUntil), read before the statement: a value it has since
   * passed reads more hours from their hourly rows, and the same figures. A parameter, not a
   * subquery, so that the planner counts the hours after it (a series of unknown bounds is
   * planned as 1,000 rows, and a plan that dear was JIT-compiled: 2–3 s).
   */
  settledUntil: Date
}

/** The end of the hours whose rows session_figures holds (migration 2026-12-06T1600). */
export async function sessionsSettledUntil(db: Executor): Promise<Date> {
  const { rows: [row] } = await sql<{ settled_until: Date }>`select settled_until from session_figures_settled`.execute(db)
  return row!.settled_until
}

/**
 * (value, figure) of the window's top sessions, largest absolute figure first, ties in code
 * point order and '' last, as metric-rollups.ts ranks groups. `hourly(only)` is the window's
 * figure of each value from the hourly rows meeting the condition `only` (columns value, figure);
 * `openCells()` that of the open sessions from openSessionRows (when the window has hours after the settled ones).
 */
export function rankedSessions(
  window: SessionWindow, hourly: (only: RawBuilder<unknown>) => RawBuilder<unknown>, openCells: () => RawBuilder<unknown>,
): RawBuilder<unknown> {
  if (!RANKED.has(window.metric)) throw new RangeError(`metric: ${window.metric} does not rank sessions`)
  const topOfDay = sql.id(`tracewell_top_sessions_by_${window.metric}`)
  const { projectId, from, to } = window
  const longest = sql`(select last_hour - first_hour from session_figures where project_id = ${projectId} order by last_hour - first_hour desc limit 1)`
  const beganBefore = (edge: Date) =>
    sql`select session_id collate "default" from session_figures where project_id = ${projectId} and first_hour >= ${edge}::timestamptz - ${longest} and first_hour < ${edge} and last_hour >= ${edge}`
  const open = hasOpenHours(window)
  // The open sessions with settled rows: a day's top may hold them (with their settled figures only), so it is read that much longer.
  const settledToo = sql`select session_id collate "default" from settled_open`
  const dayTops = sql`
    select s.value, s.figure
    from generate_series(date_bin('1 day', ${from}::timestamptz, timestamptz '2000-01-01 00:00:00+00'), ${to}::timestamptz, interval '1 day') as d(at)
    cross join lateral (
      select session_id as value, figure
      from ${topOfDay}(${projectId}, d.at, ${from}, ${to}, ${open ? sql`${window.maxGroups} + (select count(*) from (${settledToo}) t)::int` : window.maxGroups})
    ) s${open ? sql` where s.value <> all(array(${settledToo}))` : sql``}`
  // The open hours' rows read once (a day's: 6,300 in bench:dashboards), and the rows of the
  // sessions that have some of them besides settled ones: those marked open before the window's end.
  const openSessions = sql`,
    open_rows as (${openHourRows(window)}),
    settled_open as (
      select * from session_figures
      where project_id = ${projectId} and open_from is not null and open_from < ${to}
        and session_id collate "default" <> all(array(select value from edge_sessions))
    )`
  // In the hourly rows' collation: a "C" array made `value = any(…)` a filter of every row of the hour, not an index condition.
  return sql`
    with edge_sessions (value) as (${beganBefore(from)} union all ${beganBefore(to)} union all select '')${open ? openSessions : sql``}
    select value, figure from (
      ${dayTops}
      union all
      select value, figure from (${hourly(sql` and value = any(array(select value from edge_sessions))`)}) e
      ${open ? sql`union all select value, figure from (${openCells()}) o` : sql``}
    ) c
    order by abs(coalesce(figure, 0)) desc, value = '', value collate "C" limit ${window.maxGroups}`
}

/**
 * The 'session' rows of the window's hours after the settled ones, each hour looked up by key; in
 * those hours' partitions only (the range a constant: the others are not planned, 35 of them at 30 days).
 */
function openHourRows(window: SessionWindow): RawBuilder<unknown> {
  const from = openFrom(window)
  return sql`
    select r.* from generate_series(${from}::timestamptz, ${window.to}::timestamptz, interval '1 hour') as h(at)
    cross join lateral (
      select ${ROW_FIGURES} from usage_rollups
      where project_id = ${window.projectId} and dimension = 'session' and hour = h.at and hour >= ${from} and hour < ${window.to} offset 0
    ) as r
    where h.at < ${window.to}`
}

/** The columns of a rollup row that figures are computed from. */
const ROW_FIGURES = sql`hour, value, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations`

/**
 * `columns` (of ROW_FIGURES) of the open sessions' rows of the window (rankedSessions' CTEs
 * open_rows and settled_open): their hourly rows after the settled hours, and the row in
 * session_figures of those that have one, as one more row. A session not among the edge ones
 * (edge_sessions) has its settled rows all in the window (its row's first hour in it) or none.
 */
export function openSessionRows(window: SessionWindow, columns: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    select ${columns} from open_rows where value <> all(array(select value from edge_sessions))
    union all
    select ${columns} from (
      select first_hour as hour, session_id collate "default" as value, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations
      from settled_open where first_hour >= ${window.from}
    ) f`
}

/**
 * The window's hours in which the session `value` may have hourly rows, given its row in
 * session_figures `f` (or none): the settled ones its row bounds, and those after them; every
 * hour for '' (traces without a session, no row). The caller keeps those before the window's end.
 */
export function sessionHours(window: SessionWindow, value: RawBuilder<unknown>, f: string): RawBuilder<unknown> {
  const row = sql.ref(f)
  const { from, to } = window
  return sql`
    select at from generate_series(${from}::timestamptz, ${to}::timestamptz, interval '1 hour') as a(at) where ${value} = ''
    union all
    select at from generate_series(greatest(${row}.first_hour, ${from}::timestamptz), least(${row}.last_hour, ${lastSettledHour(window)}::timestamptz), interval '1 hour') as a(at)
    where ${value} <> '' and ${row}.session_id is not null
    ${hasOpenHours(window) ? sql`union all
    select at from generate_series(${openFrom(window)}::timestamptz, ${to}::timestamptz, interval '1 hour') as a(at) where ${value} <> ''` : sql``}`
}

/**
 * Whether the window has hours after the settled ones: a window of settled hours alone reads
 * neither their rows nor the open sessions' (a plan that much smaller, where tests JIT-compile).
 */
const hasOpenHours = (window: SessionWindow): boolean => openFrom(window) < window.to

/** The first of the window's hours after the settled ones. */
const openFrom = (window: SessionWindow): Date => new Date(Math.max(window.from.getTime(), window.settledUntil.getTime()))

/** The last settled hour, or the window's end if sooner (the caller keeps the hours before it). */
const lastSettledHour = (window: SessionWindow): Date => new Date(Math.min(window.settledUntil.getTime() - 3_600_000, window.to.getTime()))

/** Whether rankedSessions ranks this metric. */
export const sessionsRank = (metric: string): boolean => RANKED.has(metric)
