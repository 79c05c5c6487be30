import { sql, type Kysely } from 'kysely'

// Issue 48 §8.
//
// Why a judgment was skipped: left out by the evaluator's sampling rate, or a trace with nothing
// to judge (no input or output for the template), which is never sent to the judge. Every
// judgment skipped before this column was skipped by sampling.
//
// Tracewell's own calls (service.name 'tracewell': playground, experiments, judges) are left out
// of usage by default. The service rollup says what to take back from the 'all' and 'user' rows
// (they have no user); for the model and vendor rows the writer now also rolls those calls up
// under the dimensions 'tracewell.model' and 'tracewell.vendor', and a trace counts in them as in
// the others (this function, which the summary check and recounts read). Calls stored before are
// not rolled up again: until their hours leave the retention window, usage by model or vendor
// still counts them.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table evaluation_jobs add column skip_reason text`.execute(db)
  await sql`update evaluation_jobs set skip_reason = 'not sampled (the evaluator''s sampling rate)' where status = 'skipped'`.execute(db)
  await sql`
    create or replace function tracewell_trace_rollup_keys(models text[], vendors text[], services text[], user_id text)
    returns table (dimension text, value text)
    language sql immutable parallel safe as $$
      select 'all', ''
      union all select 'model', m from unnest(case when cardinality(models) = 0 then array[''] else models end) as m
      union all select 'vendor', v from unnest(case when cardinality(vendors) = 0 then array[''] else vendors end) as v
      union all select 'service', s from unnest(case when cardinality(services) = 0 then array[''] else services end) as s
      union all select 'user', coalesce(user_id, '')
      union all select 'tracewell.model', m from unnest(case when not ('tracewell' = any(services)) then '{}' when cardinality(models) = 0 then array[''] else models end) as m
      union all select 'tracewell.vendor', v from unnest(case when not ('tracewell' = any(services)) then '{}' when cardinality(vendors) = 0 then array[''] else vendors end) as v
    $$`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function tracewell_trace_rollup_keys(models text[], vendors text[], services text[], user_id text)
    returns table (dimension text, value text)
    language sql immutable parallel safe as $$
      select 'all', ''
      union all select 'model', m from unnest(case when cardinality(models) = 0 then array[''] else models end) as m
      union all select 'vendor', v from unnest(case when cardinality(vendors) = 0 then array[''] else vendors end) as v
      union all select 'service', s from unnest(case when cardinality(services) = 0 then array[''] else services end) as s
      union all select 'user', coalesce(user_id, '')
    $$`.execute(db)
  await sql`delete from usage_rollups where dimension in ('tracewell.model', 'tracewell.vendor')`.execute(db)
  await sql`alter table evaluation_jobs drop column skip_reason`.execute(db)
}
