import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// One row per trace, kept by the writer in the transaction that stores the trace's spans
// (trace-summaries.ts): what the trace list, its filters and sorts, and sessions read instead of
// grouping millions of spans on every request. Counters and sums are added to, so a batch is
// folded in once whatever order spans arrive in; the writer folds in only spans it inserted, so a
// redelivered job changes nothing.
//
// Then the traces stored before are summarised from their spans, in one statement. Stop the
// writers while it runs (ingest keeps queueing): spans stored meanwhile by a writer of the
// previous version would be missing from their trace's row.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table trace_summaries (
      project_id text not null,
      trace_id text not null,
      name text not null,
      has_root boolean not null,
      service_name text,
      start_time timestamptz not null,
      end_time timestamptz not null,
      duration_us bigint not null,
      span_count integer not null,
      error_count integer not null,
      models text[] not null default '{}',
      vendors text[] not null default '{}',
      services text[] not null default '{}',
      input_tokens bigint not null default 0,
      output_tokens bigint not null default 0,
      total_tokens bigint not null default 0,
      cost_usd numeric,
      session_id text,
      user_id text,
      primary key (project_id, trace_id)
    )`.execute(db)
  // The list's sorts, each with the trace id as tie-break (the cursor's second half).
  await sql`create index trace_summaries_time_idx on trace_summaries (project_id, start_time desc, trace_id desc)`.execute(db)
  await sql`create index trace_summaries_duration_idx on trace_summaries (project_id, duration_us desc, trace_id desc)`.execute(db)
  await sql`create index trace_summaries_cost_idx on trace_summaries (project_id, (coalesce(cost_usd, -1)) desc, trace_id desc)`.execute(db)
  await sql`create index trace_summaries_tokens_idx on trace_summaries (project_id, total_tokens desc, trace_id desc)`.execute(db)
  // Sessions and users: their traces in time order.
  await sql`create index trace_summaries_session_idx on trace_summaries (project_id, session_id, start_time) where session_id is not null`.execute(db)
  await sql`create index trace_summaries_user_idx on trace_summaries (project_id, user_id, start_time) where user_id is not null`.execute(db)

  await backfillTraceSummaries(db)
}

/**
 * Summarises every stored trace from its spans (also what bench:query and bench:cleanup load
 * their summaries with), inserting them in the order the writer would have: by start. The rows
 * then lie in the table in time order, as the writer's do, and the janitor, which deletes a
 * stretch of time at a time, finds each stretch's rows on few pages instead of on every page.
 *
 * `wordsInBlocks`: on a database past 2026-11-27T0600-text-blocks, whose summaries must say so
 * (the blocks themselves are backfillTextBlocks').
 */
export async function backfillTraceSummaries(db: AnyDb, { wordsInBlocks = false } = {}): Promise<void> {
  await sql`
    insert into trace_summaries (project_id, trace_id, name, has_root, service_name, start_time, end_time, duration_us,
      span_count, error_count, models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id
      ${wordsInBlocks ? sql`, words_in_blocks` : sql``})
    select project_id, trace_id,
      coalesce((array_agg(name order by start_time) filter (where parent_span_id is null))[1], (array_agg(name order by start_time))[1]),
      bool_or(parent_span_id is null),
      coalesce((array_agg(service_name order by start_time) filter (where parent_span_id is null))[1], (array_agg(service_name order by start_time) filter (where service_name is not null))[1]),
      min(start_time), max(end_time),
      (extract(epoch from max(end_time) - min(start_time)) * 1000000)::bigint,
      count(*), count(*) filter (where status_code = 2),
      coalesce(array_agg(distinct llm_model) filter (where llm_model is not null), '{}'),
      coalesce(array_agg(distinct llm_vendor) filter (where llm_vendor is not null), '{}'),
      coalesce(array_agg(distinct service_name) filter (where service_name is not null), '{}'),
      coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
      coalesce(sum(coalesce(total_tokens, coalesce(input_tokens, 0) + coalesce(output_tokens, 0))), 0),
      sum(total_cost_usd),
      (array_agg(session_id order by start_time) filter (where session_id is not null))[1],
      (array_agg(user_id order by start_time) filter (where user_id is not null))[1]
      ${wordsInBlocks ? sql`, true` : sql``}
    from spans
    group by project_id, trace_id
    order by min(start_time)
    on conflict do nothing`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('trace_summaries').ifExists().execute()
}
