import { sql } from 'kysely'
import type { Executor } from './executor.ts'

/** A session, by project. */
export interface SessionKey {
  project_id: string
  session_id: string
}

/**
 * Where the summariser knows a session's rows can be (its filters of sealed days, see
 * SealedSummaryDays in @tracewell/write-path): the days of trace_summaries and of
 * session_summaries to look in, each a UTC day YYYY-MM-DD, and today, the partition the
 * recomputed rows go to.
 */
export interface SessionDayLookup {
  today: string
  traceDays(session: SessionKey): string[]
  sessionDays(session: SessionKey): string[]
}

/**
 * Recomputes the sessions' rows in session_summaries from all their traces' summaries, each
 * session's traces read through the session index; a session left without traces loses its row.
 * A recomputation, not a sum: a session's user is its first trace's, which a late trace can
 * change. The write path's summariser calls it for the sessions of the traces it folded (one
 * summariser at a time, so no two recompute a session at once), with `days` saying which day
 * partitions to look in; deleting a trace calls it for its session, looking in every day.
 *
 * The recomputed row is written into today's partition (fold_day): the stored row of an earlier
 * day is deleted, one of today updated in place.
 */
export async function recomputeSessions(db: Executor, sessions: readonly SessionKey[], days?: SessionDayLookup): Promise<void> {
  if (sessions.length === 0) return
  const today = days?.today ?? (await utcToday(db))
  // Every join below is a lateral lookup by index from one session's key (the trace and session
  // rows in the one partition each day names), never a join of two row sets: without statistics,
  // such a join of the sessions with their traces was planned as a nested loop over both whole
  // sets (a fold of 5,000 sessions took seconds). Hash and merge joins are off for the same reason.
  await sql`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`.execute(db)
  const keys = sessions.map((session) => ({ ...session, trace_days: days?.traceDays(session) ?? null, session_days: days?.sessionDays(session) ?? null }))
  const tracesOfSession = days === undefined
    ? sql`(select t.user_id, t.start_time, t.end_time, t.total_tokens, t.cost_usd from trace_summaries t
        where t.project_id = k.project_id and t.session_id = k.session_id) as t`
    : sql`unnest(k.trace_days) as d(day) cross join lateral (
        select t.user_id, t.start_time, t.end_time, t.total_tokens, t.cost_usd from trace_summaries t
        where t.project_id = k.project_id and t.session_id = k.session_id and t.fold_day = d.day offset 0) as t`
  const rowsOfSession = days === undefined
    ? sql`(select s.fold_day from session_summaries s where s.project_id = k.project_id and s.session_id = k.session_id) as s`
    : sql`unnest(k.session_days) as d(day) cross join lateral (
        select s.fold_day from session_summaries s
        where s.project_id = k.project_id and s.session_id = k.session_id and s.fold_day = d.day offset 0) as s`
  await sql`
    with recomputed as (
      select k.project_id, k.session_id, a.user_id, a.first_seen, a.last_seen, a.trace_count, a.total_tokens, a.cost_usd,
        array(select s.fold_day from ${rowsOfSession}) as stored_days
      from json_to_recordset(${JSON.stringify(keys)}::json) as k(project_id text, session_id text, trace_days date[], session_days date[])
      cross join lateral (
        select (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1] as user_id,
          min(t.start_time) as first_seen, max(t.end_time) as last_seen, count(*)::integer as trace_count,
          sum(t.total_tokens) as total_tokens, sum(t.cost_usd) as cost_usd
        from ${tracesOfSession}) as a
    ),
    stale as (
      select r.project_id, r.session_id, d.day from recomputed r cross join lateral unnest(r.stored_days) as d(day)
      where r.trace_count = 0 or d.day <> ${today}::date
    ),
    emptied as (
      delete from session_summaries s using stale x
      where s.project_id = x.project_id and s.session_id = x.session_id and s.fold_day = x.day
    )
    insert into session_summaries as s (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd, fold_day)
    select project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd, ${today}::date
    from recomputed where trace_count > 0
    order by project_id, session_id
    on conflict (project_id, session_id, fold_day) do update set
      user_id = excluded.user_id, first_seen = excluded.first_seen, last_seen = excluded.last_seen,
      trace_count = excluded.trace_count, total_tokens = excluded.total_tokens, cost_usd = excluded.cost_usd`.execute(db)
}

async function utcToday(db: Executor): Promise<string> {
  const { rows } = await sql<{ today: string }>`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD') as today`.execute(db)
  return rows[0]!.today
}
