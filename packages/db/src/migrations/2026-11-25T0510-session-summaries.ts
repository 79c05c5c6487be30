import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// One row per session, what the session list reads instead of grouping every trace summary of
// the project: the traces whose trace_summaries row names the session. The writer recomputes the
// rows of the sessions a batch touched from their traces' summaries, in the transaction that
// stores the spans (session-summaries.ts), so a redelivered job recomputes the same row.
//
// Then the sessions of traces stored before are summarised, a bounded batch of sessions per
// statement. Stop the writers while it runs, as for trace summaries.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table session_summaries (
      project_id text not null,
      session_id text not null,
      user_id text,
      first_seen timestamptz not null,
      last_seen timestamptz not null,
      trace_count integer not null,
      total_tokens bigint not null,
      cost_usd numeric,
      primary key (project_id, session_id)
    )`.execute(db)
  // The list: most recently active first, the session id as tie-break (the cursor's second half).
  await sql`create index session_summaries_last_seen_idx on session_summaries (project_id, last_seen desc, session_id desc)`.execute(db)
  await backfillSessionSummaries(db)
}

const SESSIONS_PER_STATEMENT = 10_000

/** Summarises every session from its trace summaries, SESSIONS_PER_STATEMENT at a time in key order (also what bench:query uses). */
export async function backfillSessionSummaries(db: AnyDb): Promise<void> {
  let after: { project_id: string; session_id: string } | undefined
  for (;;) {
    const { rows } = await sql<{ project_id: string; session_id: string }>`
      with batch as (
        select distinct project_id, session_id from trace_summaries
        where session_id is not null ${after ? sql`and (project_id, session_id) > (${after.project_id}, ${after.session_id})` : sql``}
        order by project_id, session_id limit ${SESSIONS_PER_STATEMENT}
      ),
      inserted as (
        insert into session_summaries (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd)
        select t.project_id, t.session_id, (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1],
          min(t.start_time), max(t.end_time), count(*), sum(t.total_tokens), sum(t.cost_usd)
        from trace_summaries t join batch using (project_id, session_id)
        group by 1, 2
        on conflict do nothing
      )
      select project_id, session_id from batch order by project_id desc, session_id desc limit 1`.execute(db)
    const last = rows[0]
    if (last === undefined) return
    after = last
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('session_summaries').ifExists().execute()
}
