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
// the sessions are first locked (a transaction advisory lock each, in one order, by the statement
// that upserts the trace summaries), and the recomputation is a later statement, whose snapshot
// sees what the previous holder committed.

/**
 * Locks the sessions named by `relation` (rows of project_id and session_id), a row per session
 * locked: the trace summary upsert ends with it, over the rows it wrote.
 */
export const lockSessionsOf = (relation: string): string => `
  select pg_advisory_xact_lock(k)::text as locked from (
    select distinct hashtextextended(project_id || chr(1) || session_id, 7) as k
    from ${relation} where session_id is not null order by k) as sessions`

/** Recomputes the sessions of the batch's traces (TraceSummaryBatch.toJson as $1), once they are locked. */
export const recomputeSessionsStatement = `
  insert into session_summaries as s (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd)
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
    trace_count = excluded.trace_count, total_tokens = excluded.total_tokens, cost_usd = excluded.cost_usd`

/** Recomputes the sessions of a batch's traces; after upsertTraceSummaries (which locked them), in its transaction. */
export async function refreshSessionSummaries(db: Executor, batch: TraceSummaryBatch): Promise<void> {
  const [head, tail] = recomputeSessionsStatement.split('$1') as [string, string]
  await sql`${sql.raw(head)}${batch.toJson()}${sql.raw(tail)}`.execute(db)
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
