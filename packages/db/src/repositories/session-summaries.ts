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
  // Every join below is a nested loop of index lookups, each in the one partition its key names
  // (a hash join would scan the tables); the summariser's transaction has them off already.
  await sql`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`.execute(db)
  const traceKeys = keysInDays(sessions, days?.traceDays)
  const rowKeys = keysInDays(sessions, days?.sessionDays)
  const inDay = (alias: string) => (days === undefined ? sql`` : sql`and ${sql.ref(`${alias}.fold_day`)} = k.day`)
  await sql`
    with traces as (
      select k.project_id, k.session_id, t.user_id, t.start_time, t.end_time, t.total_tokens, t.cost_usd
      from unnest(${traceKeys.projects}::text[], ${traceKeys.sessions}::text[], ${traceKeys.days}::date[]) as k(project_id, session_id, day)
      cross join lateral (
        select t.user_id, t.start_time, t.end_time, t.total_tokens, t.cost_usd from trace_summaries t
        where t.project_id = k.project_id and t.session_id = k.session_id ${inDay('t')} offset 0) as t
    ),
    recomputed as (
      select k.project_id, k.session_id,
        (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1] as user_id,
        min(t.start_time) as first_seen, max(t.end_time) as last_seen, count(t.start_time)::integer as trace_count,
        sum(t.total_tokens) as total_tokens, sum(t.cost_usd) as cost_usd
      from unnest(${sessions.map((row) => row.project_id)}::text[], ${sessions.map((row) => row.session_id)}::text[]) as k(project_id, session_id)
      left join traces t on t.project_id = k.project_id and t.session_id = k.session_id
      group by k.project_id, k.session_id
    ),
    stored as (
      select k.project_id, k.session_id, s.fold_day
      from unnest(${rowKeys.projects}::text[], ${rowKeys.sessions}::text[], ${rowKeys.days}::date[]) as k(project_id, session_id, day)
      cross join lateral (
        select s.fold_day from session_summaries s
        where s.project_id = k.project_id and s.session_id = k.session_id ${inDay('s')} offset 0) as s
    ),
    emptied as (
      delete from session_summaries s using stored d, recomputed r
      where r.project_id = d.project_id and r.session_id = d.session_id
        and s.project_id = d.project_id and s.session_id = d.session_id and s.fold_day = d.fold_day
        and (r.trace_count = 0 or d.fold_day <> ${today}::date)
    )
    insert into session_summaries as s (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd, fold_day)
    select project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd, ${today}::date
    from recomputed where trace_count > 0
    order by project_id, session_id
    on conflict (project_id, session_id, fold_day) do update set
      user_id = excluded.user_id, first_seen = excluded.first_seen, last_seen = excluded.last_seen,
      trace_count = excluded.trace_count, total_tokens = excluded.total_tokens, cost_usd = excluded.cost_usd`.execute(db)
}

/** Each session once a day to look in (a null day: every day). */
function keysInDays(sessions: readonly SessionKey[], daysOf: ((session: SessionKey) => string[]) | undefined) {
  const keys = { projects: [] as string[], sessions: [] as string[], days: [] as Array<string | null> }
  for (const session of sessions) {
    for (const day of daysOf?.(session) ?? [null]) {
      keys.projects.push(session.project_id)
      keys.sessions.push(session.session_id)
      keys.days.push(day)
    }
  }
  return keys
}

async function utcToday(db: Executor): Promise<string> {
  const { rows } = await sql<{ today: string }>`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD') as today`.execute(db)
  return rows[0]!.today
}
