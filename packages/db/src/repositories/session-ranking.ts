import { sql, type RawBuilder } from 'kysely'

// The top sessions of a window by a figure (issue 45 §3: dashboards by session over 30 days), from
// a row a session (session_figures, migration 2026-12-06T1500) instead of every session's hourly
// rows of the window. A session whose rows all lie in the window has its whole figures as the
// window's: the top of each UTC day of first hours, read from an index in that order (a few rows a
// day). Sessions that may cross the window's start or end (those that began up to the longest
// session's length before it), and the session '' (traces without one), are few: their figures are
// computed from their hourly rows, as before. The two merged rank as the hourly rows alone would.

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
}

/**
 * (value, figure) of the window's top sessions, largest absolute figure first, ties in code
 * point order and '' last, as metric-rollups.ts ranks groups. `hourly(only)` is the window's
 * figure of each value from the hourly rows meeting the condition `only` (columns value, figure).
 */
export function rankedSessions(window: SessionWindow, hourly: (only: RawBuilder<unknown>) => RawBuilder<unknown>): RawBuilder<unknown> {
  if (!RANKED.has(window.metric)) throw new RangeError(`metric: ${window.metric} does not rank sessions`)
  const topOfDay = sql.id(`tracewell_top_sessions_by_${window.metric}`)
  const { projectId, from, to } = window
  const longest = sql`(select last_hour - first_hour from session_figures where project_id = ${projectId} order by last_hour - first_hour desc limit 1)`
  const beganBefore = (edge: Date) =>
    sql`select session_id collate "default" from session_figures where project_id = ${projectId} and first_hour >= ${edge}::timestamptz - ${longest} and first_hour < ${edge} and last_hour >= ${edge}`
  // In the hourly rows' collation: a "C" array made `value = any(…)` a filter of every row of the hour, not an index condition.
  const edges = sql`${beganBefore(from)} union all ${beganBefore(to)} union all select ''`
  return sql`
    select value, figure from (
      select s.value, s.figure
      from generate_series(date_bin('1 day', ${from}::timestamptz, timestamptz '2000-01-01 00:00:00+00'), ${to}::timestamptz, interval '1 day') as d(at)
      cross join lateral (select session_id as value, figure from ${topOfDay}(${projectId}, d.at, ${from}, ${to}, ${window.maxGroups})) s
      union all
      select value, figure from (${hourly(sql` and value = any(array(${edges}))`)}) e
    ) c
    order by abs(coalesce(figure, 0)) desc, value = '', value collate "C" limit ${window.maxGroups}`
}

/** Whether rankedSessions ranks this metric. */
export const sessionsRank = (metric: string): boolean => RANKED.has(metric)
