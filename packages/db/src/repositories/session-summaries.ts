import { sql } from 'kysely'
import type { Executor } from './executor.ts'

/** A session, by project. */
export interface SessionKey {
  project_id: string
  session_id: string
}

/**
 * Recomputes the sessions' rows in session_summaries from all their traces' summaries, each
 * session's traces read through the session index; a session left without traces loses its row.
 * A recomputation, not a sum: a session's user is its first trace's, which a late trace can
 * change. The write path's summariser calls it for the sessions of the traces it folded (one
 * summariser at a time, so no two recompute a session at once); deleting a trace, for its session.
 */
export async function recomputeSessions(db: Executor, sessions: readonly SessionKey[]): Promise<void> {
  if (sessions.length === 0) return
  await sql`
    with recomputed as (
      select k.project_id, k.session_id, t.user_id, t.first_seen, t.last_seen, t.trace_count, t.total_tokens, t.cost_usd
      from unnest(${sessions.map((row) => row.project_id)}::text[], ${sessions.map((row) => row.session_id)}::text[]) as k(project_id, session_id)
      cross join lateral (
        select (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1] as user_id,
          min(t.start_time) as first_seen, max(t.end_time) as last_seen, count(*)::integer as trace_count,
          sum(t.total_tokens) as total_tokens, sum(t.cost_usd) as cost_usd
        from trace_summaries t where t.project_id = k.project_id and t.session_id = k.session_id) as t
    ),
    emptied as (
      delete from session_summaries s using recomputed r
      where s.project_id = r.project_id and s.session_id = r.session_id and r.trace_count = 0
    )
    insert into session_summaries as s (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd)
    select project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd
    from recomputed where trace_count > 0
    order by project_id, session_id
    on conflict (project_id, session_id) do update set
      user_id = excluded.user_id, first_seen = excluded.first_seen, last_seen = excluded.last_seen,
      trace_count = excluded.trace_count, total_tokens = excluded.total_tokens, cost_usd = excluded.cost_usd`.execute(db)
}
