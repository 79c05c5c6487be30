import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Token counts that no span reported are unknown, not 0 (issue 30, item 4): a trace whose spans
// reported no tokens showed 0 and sorted as 0. The summaries' token columns become nullable; the
// writer leaves them null until a span reports a count, and sums only the counts reported (as for
// cost). Rows written before are set to null where they say 0 and no counted span behind them
// reported a count; a 0 that a span reported stays 0.
//
// Rows are only nulled here, never recounted: a batch whose summary delta is not folded yet adds
// its counts to the row afterwards (null plus a count is the count), so recounting from spans
// would count it twice. Frozen in time: the aggregate operation ('invoke_agent', whose tokens its
// children carry) is written here, not imported.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table trace_summaries
      alter column input_tokens drop not null, alter column input_tokens drop default,
      alter column output_tokens drop not null, alter column output_tokens drop default,
      alter column total_tokens drop not null, alter column total_tokens drop default`.execute(db)
  await sql`alter table usage_rollups alter column input_tokens drop not null, alter column output_tokens drop not null`.execute(db)
  await sql`alter table session_summaries alter column total_tokens drop not null`.execute(db)
  // Unknown costs and token counts sort last in both directions (trace-search.repository.ts): the
  // descending sort puts them at -1, the ascending one past any value, each with an index of its own.
  await sql`drop index trace_summaries_tokens_idx`.execute(db)
  await sql`create index trace_summaries_tokens_idx on trace_summaries (project_id, (coalesce(total_tokens, -1)) desc, trace_id desc)`.execute(db)
  await sql`create index trace_summaries_tokens_asc_idx on trace_summaries (project_id, (coalesce(total_tokens, 9223372036854775807::bigint)), trace_id)`.execute(db)
  await sql`create index trace_summaries_cost_asc_idx on trace_summaries (project_id, (coalesce(cost_usd, 100000000000000000000000000000::numeric)), trace_id)`.execute(db)
  await nullUnknownTokenCounts(db)
}

/**
 * Sets to null the token counts of trace summaries, session summaries and usage rollups that say 0
 * where no counted span reported a count. Exported (through the package index) for tests and
 * benchmarks that build summaries with the earlier migrations' backfills, which write 0.
 */
export async function nullUnknownTokenCounts(db: AnyDb): Promise<void> {
  // Traces: one lookup of the trace's spans (primary key prefix) per summary that says 0.
  await sql`
    update trace_summaries t set
      input_tokens = case when t.input_tokens = 0 and not k.input then null else t.input_tokens end,
      output_tokens = case when t.output_tokens = 0 and not k.output then null else t.output_tokens end,
      total_tokens = case when t.total_tokens = 0 and not (k.input or k.output or k.total) then null else t.total_tokens end
    from trace_summaries z
    cross join lateral (
      select coalesce(bool_or(s.input_tokens is not null), false) as input,
        coalesce(bool_or(s.output_tokens is not null), false) as output,
        coalesce(bool_or(s.total_tokens is not null), false) as total
      from spans s
      where s.project_id = z.project_id and s.trace_id = z.trace_id and s.llm_request_type is distinct from 'invoke_agent'
    ) k
    where z.project_id = t.project_id and z.trace_id = t.trace_id
      and (z.input_tokens = 0 or z.output_tokens = 0 or z.total_tokens = 0)`.execute(db)

  // Sessions: their total is the sum of their traces' totals, unknown when every one is.
  await sql`
    update session_summaries s set total_tokens = null
    where s.total_tokens = 0 and not exists (
      select 1 from trace_summaries t where t.project_id = s.project_id and t.session_id = s.session_id and t.total_tokens is not null)`.execute(db)

  // Hourly rollups: the rows (project, dimension, UTC hour, value) that a counted span with a
  // count falls in, found in one pass over those spans; a row saying 0 outside them is unknown.
  await sql`
    with known as materialized (
      select s.project_id, d.dimension, date_trunc('hour', s.start_time, 'UTC') as hour, d.value,
        bool_or(s.input_tokens is not null) as input, bool_or(s.output_tokens is not null) as output
      from spans s
      cross join lateral (values ('all', ''), ('model', coalesce(s.llm_model, '')), ('vendor', coalesce(s.llm_vendor, '')),
        ('service', coalesce(s.service_name, '')), ('user', coalesce(s.user_id, ''))) as d(dimension, value)
      where s.llm_request_type is distinct from 'invoke_agent' and (s.input_tokens is not null or s.output_tokens is not null)
      group by 1, 2, 3, 4
    )
    update usage_rollups u set
      input_tokens = case when u.input_tokens = 0 and not coalesce(k.input, false) then null else u.input_tokens end,
      output_tokens = case when u.output_tokens = 0 and not coalesce(k.output, false) then null else u.output_tokens end
    from usage_rollups z
    left join known k on k.project_id = z.project_id and k.dimension = z.dimension and k.hour = z.hour and k.value = z.value
    where z.project_id = u.project_id and z.dimension = u.dimension and z.hour = u.hour and z.value = u.value
      and (z.input_tokens = 0 or z.output_tokens = 0)`.execute(db)
}

// Back to counts of 0 where they were unknown, as the columns held them before.
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    update trace_summaries set input_tokens = coalesce(input_tokens, 0), output_tokens = coalesce(output_tokens, 0), total_tokens = coalesce(total_tokens, 0)
    where input_tokens is null or output_tokens is null or total_tokens is null`.execute(db)
  await sql`update usage_rollups set input_tokens = coalesce(input_tokens, 0), output_tokens = coalesce(output_tokens, 0) where input_tokens is null or output_tokens is null`.execute(db)
  await sql`update session_summaries set total_tokens = 0 where total_tokens is null`.execute(db)
  await sql`
    alter table trace_summaries
      alter column input_tokens set default 0, alter column input_tokens set not null,
      alter column output_tokens set default 0, alter column output_tokens set not null,
      alter column total_tokens set default 0, alter column total_tokens set not null`.execute(db)
  await sql`alter table usage_rollups alter column input_tokens set not null, alter column output_tokens set not null`.execute(db)
  await sql`alter table session_summaries alter column total_tokens set not null`.execute(db)
  await sql`drop index trace_summaries_cost_asc_idx`.execute(db)
  await sql`drop index trace_summaries_tokens_asc_idx`.execute(db)
  await sql`drop index trace_summaries_tokens_idx`.execute(db)
  await sql`create index trace_summaries_tokens_idx on trace_summaries (project_id, total_tokens desc, trace_id desc)`.execute(db)
}
