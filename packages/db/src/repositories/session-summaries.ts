import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import type { TraceSummaryBatch } from './trace-summaries.ts'

// The writer's side of session_summaries: after a batch's trace summaries are upserted, the rows
// of the sessions those traces belong to are recomputed from all their traces' summaries. A
// recomputation, not a sum of deltas: a session's user is its first trace's, and a trace may learn
// its session from a later batch, so the same answer comes whatever the order and however often a
// batch is delivered.
//
// Two writers recomputing one session at once would each miss the other's uncommitted traces:
// the sessions are first locked (a transaction advisory lock each, in one order), and the
// recomputation is a later statement, whose snapshot sees what the previous holder committed.

/**
 * The statements, each with the batch's trace keys (TraceSummaryBatch.toJson) as $1: lock (a row
 * per session locked), then recompute, which a batch without sessions (no row) skips.
 */
export const sessionSummaryStatements = [
  `select pg_advisory_xact_lock(k)::text as locked from (
    select distinct hashtextextended(t.project_id || chr(1) || t.session_id, 7) as k
    from trace_summaries t join jsonb_to_recordset($1::jsonb) as b(project_id text, trace_id text) using (project_id, trace_id)
    where t.session_id is not null order by k) as sessions`,
  `insert into session_summaries as s (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd)
  select t.project_id, t.session_id, (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1],
    min(t.start_time), max(t.end_time), count(*), sum(t.total_tokens), sum(t.cost_usd)
  from trace_summaries t
  where t.session_id is not null and (t.project_id, t.session_id) in (
    select t2.project_id, t2.session_id
    from trace_summaries t2 join jsonb_to_recordset($1::jsonb) as b(project_id text, trace_id text) using (project_id, trace_id)
    where t2.session_id is not null)
  group by 1, 2
  order by 1, 2
  on conflict (project_id, session_id) do update set
    user_id = excluded.user_id, first_seen = excluded.first_seen, last_seen = excluded.last_seen,
    trace_count = excluded.trace_count, total_tokens = excluded.total_tokens, cost_usd = excluded.cost_usd`,
] as const

/** Recomputes the sessions of a batch's traces; after upsertTraceSummaries, in its transaction. */
export async function refreshSessionSummaries(db: Executor, batch: TraceSummaryBatch): Promise<void> {
  if (batch.size === 0) return
  const json = batch.toJson()
  const [lock, recompute] = sessionSummaryStatements.map((statement) => statement.split('$1') as [string, string]) as [[string, string], [string, string]]
  const locked = await sql`${sql.raw(lock[0])}${json}${sql.raw(lock[1])}`.execute(db)
  if (locked.rows.length > 0) await sql`${sql.raw(recompute[0])}${json}${sql.raw(recompute[1])}`.execute(db)
}

/** Recomputes one session's row from its traces' summaries, deleting it when none is left. */
export async function refreshSession(db: Executor, projectId: string, sessionId: string): Promise<void> {
  await sql`delete from session_summaries where project_id = ${projectId} and session_id = ${sessionId}`.execute(db)
  await sql`
    insert into session_summaries (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd)
    select t.project_id, t.session_id, (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1],
      min(t.start_time), max(t.end_time), count(*), sum(t.total_tokens), sum(t.cost_usd)
    from trace_summaries t where t.project_id = ${projectId} and t.session_id = ${sessionId}
    group by 1, 2`.execute(db)
}
