import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// Dashboards and monitors (issue 45) at ten million spans: every widget from rows of an hour,
// never from a row a trace. The usage rollups (2026-11-25T0500) already count each trace once,
// in the UTC hour it started, under each of its keys; they now also keep, from the same count:
//
// - `error_traces`: the traces with an error span (error_rate is error_traces / traces);
// - `durations`: the traces' durations in the 128 log-scale buckets of `latency` (bucket i holds
//   [2^(i/4), 2^((i+1)/4)) µs), from which p50/p95/p99 are read within 9.1 %. Subscripted by the
//   bucket itself and holding only the range of buckets with a trace ('[40:41]={2,1}', '{}' for
//   none): most rows (a user's or a session's hour) hold a trace or two, and 128 integers each
//   would double the table. tracewell_histogram_add adds two such arrays.
//
// And three dimensions of the trace as a whole, whose rows carry the trace's own figures (spans,
// error spans, tokens, cost, beside traces, error_traces and durations), not its spans' alone:
// 'session' (its session id), 'prompt' (each registry:version its spans named) and 'tag' (each
// tag its spans gave it); '' for a trace without one. Tracewell's own traces (a span of service
// `tracewell`) are left out of these, as the metric engine leaves them out. A user's or a session's rows an hour also
// say who was active in it: the users and sessions metrics count the values with a trace.
//
// Those rows keep no latency histogram of calls ('{}'): they are as many as a project's sessions' hours.
//
// trace_summaries keep the trace's prompts and tags, so that a fold can take back what a trace
// counted in before (its start, its prompts and tags may change). Traces stored before this have
// neither: they count under '' in the 'prompt' and 'tag' dimensions.
//
// score_rollups: each score name's count and sum of values an hour, kept by triggers on scores
// (every insert, update and delete: the API, the judges, retention and erasure alike), leaving out
// scores of Tracewell's own traces (service `tracewell`) as the metric engine does.
//
// The figures of rows stored before are computed from the summaries and scores, one UTC day at a
// time; run it with the writers stopped, as the summary migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table trace_summaries add column prompts text[] not null default '{}', add column tags text[] not null default '{}'`.execute(db)
  await sql`alter table usage_rollups add column error_traces integer not null default 0, add column durations integer[] not null default '{}'`.execute(db)
  // The rows of the whole trace, beside tracewell_trace_rollup_keys' (those of its spans' values).
  await sql`
    create function tracewell_trace_whole_keys(session_id text, prompts text[], tags text[])
    returns table (dimension text, value text)
    language sql immutable parallel safe as $$
      select 'session', coalesce(session_id, '')
      union all select 'prompt', p from unnest(case when cardinality(prompts) = 0 then array[''] else prompts end) as p
      union all select 'tag', g from unnest(case when cardinality(tags) = 0 then array[''] else tags end) as g
    $$`.execute(db)
  // Trimmed to the buckets from the lowest to the highest not 0, so that a histogram has one form.
  // In PL/pgSQL: the fold calls it for each row it adds to, and a loop over a few buckets costs a
  // seventh of the same in SQL (generate_series and an aggregate a call: ~200 µs on a loaded machine).
  await sql`
    create function tracewell_histogram_add(a integer[], b integer[], factor integer) returns integer[]
    language plpgsql immutable parallel safe as $$
    declare
      lo integer;
      hi integer;
      first integer;
      last integer;
      v integer;
      r integer[];
    begin
      if b is null or cardinality(b) = 0 then return a; end if;
      if (a is null or cardinality(a) = 0) and factor = 1 then return b; end if;
      lo := least(coalesce(array_lower(a, 1), array_lower(b, 1)), array_lower(b, 1));
      hi := greatest(coalesce(array_upper(a, 1), array_upper(b, 1)), array_upper(b, 1));
      for i in lo..hi loop
        v := coalesce(a[i], 0) + factor * coalesce(b[i], 0);
        if v <> 0 then
          first := coalesce(first, i);
          last := i;
        end if;
      end loop;
      if first is null then return '{}'; end if;
      r := array_fill(0, array[last - first + 1], array[first]);
      for i in first..last loop
        r[i] := coalesce(a[i], 0) + factor * coalesce(b[i], 0);
      end loop;
      return r;
    end $$`.execute(db)
  await sql`
    create table score_rollups (
      project_id text not null,
      name text not null,
      hour timestamptz not null,
      scores integer not null,
      value_sum double precision not null,
      primary key (project_id, name, hour)
    )`.execute(db)
  // One function does the work of every event, an update being its delete and its insert (two
  // triggers, each with its transition table). Rows in key order: two transactions adding to the
  // same hours lock them in one order.
  await sql`create type tracewell_score_fact as (project_id text, name text, created_at timestamptz, value double precision, trace_id text)`.execute(db)
  await sql`
    create function tracewell_add_score_rollups(facts tracewell_score_fact[], sign integer) returns void language sql as $$
      insert into score_rollups as r (project_id, name, hour, scores, value_sum)
      select f.project_id, f.name, date_trunc('hour', f.created_at, 'UTC'), sign * count(*), sign * sum(f.value)
      from unnest(facts) as f
      where f.value is not null
        and not exists (select 1 from trace_summaries t where t.project_id = f.project_id and t.trace_id = f.trace_id and t.service_name = 'tracewell')
      group by 1, 2, 3
      order by 1, 2, 3
      on conflict (project_id, name, hour) do update set scores = r.scores + excluded.scores, value_sum = r.value_sum + excluded.value_sum
    $$`.execute(db)
  for (const [event, table, sign] of [['insert', 'new_scores', 1], ['delete', 'old_scores', -1]] as const) {
    await sql`
      create function ${sql.id(`tracewell_score_rollups_${event}`)}() returns trigger language plpgsql as $$
      begin
        perform tracewell_add_score_rollups(array(select row(s.project_id, s.name, s.created_at, s.value, s.trace_id)::tracewell_score_fact from ${sql.raw(table)} s), ${sql.lit(sign)});
        return null;
      end $$`.execute(db)
  }
  await sql`create trigger scores_rollup_insert after insert on scores referencing new table as new_scores for each statement execute function tracewell_score_rollups_insert()`.execute(db)
  await sql`create trigger scores_rollup_update_old after update on scores referencing old table as old_scores for each statement execute function tracewell_score_rollups_delete()`.execute(db)
  await sql`create trigger scores_rollup_update_new after update on scores referencing new table as new_scores for each statement execute function tracewell_score_rollups_insert()`.execute(db)
  await sql`create trigger scores_rollup_delete after delete on scores referencing old table as old_scores for each statement execute function tracewell_score_rollups_delete()`.execute(db)
  await backfillTraceRollups(db)
}

/**
 * The figures of traces in every rollup row, computed from the stored summaries a UTC day at a
 * time, and the score rollups from the scores (also what bench:dashboards loads them with, and
 * how they are rebuilt): each row's traces, error_traces and durations written over, the rows of
 * the whole trace written whole. Run it with the summariser stopped.
 */
export async function backfillTraceRollups(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(start_time), 'UTC') as first, max(start_time) as last from trace_summaries`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  for (let day = first ? new Date(first) : null; day !== null && last && day <= last; day = new Date(day.getTime() + 86_400_000)) {
    const to = new Date(day.getTime() + 86_400_000)
    await sql`
      with t as (
        select t.*, date_trunc('hour', t.start_time, 'UTC') as hour,
          case when t.duration_us < 1 then 0 else least(127, floor(4 * ln(t.duration_us) / ln(2)))::int end as bucket
        from trace_summaries t where t.start_time >= ${day} and t.start_time < ${to}
      ),
      keyed as (
        select t.*, k.dimension, k.value, false as whole
        from t cross join lateral tracewell_trace_rollup_keys(t.models, t.vendors, t.services, t.user_id) as k
        union all
        select t.*, k.dimension, k.value, true
        from t cross join lateral tracewell_trace_whole_keys(t.session_id, t.prompts, t.tags) as k
        where not ('tracewell' = any(t.services))
      ),
      counts as (select project_id, dimension, hour, value, bucket, count(*)::int as n from keyed group by 1, 2, 3, 4, 5),
      -- Each row's buckets from its lowest to its highest, subscripted by bucket.
      histograms as (
        select k.project_id, k.dimension, k.hour, k.value,
          ('[' || k.lo || ':' || k.hi || ']=' || array_agg(coalesce(c.n, 0) order by i)::text)::integer[] as durations
        from (select project_id, dimension, hour, value, min(bucket) as lo, max(bucket) as hi from counts group by 1, 2, 3, 4) k
        cross join lateral generate_series(k.lo, k.hi) as i
        left join counts c on c.project_id = k.project_id and c.dimension = k.dimension and c.hour = k.hour and c.value = k.value and c.bucket = i
        group by k.project_id, k.dimension, k.hour, k.value, k.lo, k.hi
      ),
      figures as (
        select project_id, dimension, hour, value, bool_or(whole) as whole, count(*)::int as traces,
          (count(*) filter (where error_count > 0))::int as error_traces, sum(span_count)::int as spans, sum(error_count)::int as errors,
          sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_usd) as cost_usd
        from keyed group by 1, 2, 3, 4
      )
      insert into usage_rollups as u (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency, error_traces, durations)
      select f.project_id, f.dimension, f.hour, f.value, f.traces,
        case when f.whole then f.spans else 0 end, case when f.whole then f.errors else 0 end,
        case when f.whole then f.input_tokens end, case when f.whole then f.output_tokens end, case when f.whole then f.cost_usd end,
        case when f.whole then '{}'::integer[] else array_fill(0, array[128]) end, f.error_traces, h.durations
      from figures f join histograms h using (project_id, dimension, hour, value)
      on conflict (project_id, dimension, hour, value) do update set traces = excluded.traces, error_traces = excluded.error_traces,
        durations = excluded.durations,
        spans = case when u.dimension in ('session', 'prompt', 'tag') then excluded.spans else u.spans end,
        errors = case when u.dimension in ('session', 'prompt', 'tag') then excluded.errors else u.errors end,
        input_tokens = case when u.dimension in ('session', 'prompt', 'tag') then excluded.input_tokens else u.input_tokens end,
        output_tokens = case when u.dimension in ('session', 'prompt', 'tag') then excluded.output_tokens else u.output_tokens end,
        cost_usd = case when u.dimension in ('session', 'prompt', 'tag') then excluded.cost_usd else u.cost_usd end`.execute(db)
  }
  await sql`delete from score_rollups`.execute(db)
  await sql`
    insert into score_rollups (project_id, name, hour, scores, value_sum)
    select s.project_id, s.name, date_trunc('hour', s.created_at, 'UTC'), count(*), sum(s.value)
    from scores s
    where s.value is not null
      and not exists (select 1 from trace_summaries t where t.project_id = s.project_id and t.trace_id = s.trace_id and t.service_name = 'tracewell')
    group by 1, 2, 3`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ['scores_rollup_insert', 'scores_rollup_update_old', 'scores_rollup_update_new', 'scores_rollup_delete']) {
    await sql`drop trigger if exists ${sql.id(trigger)} on scores`.execute(db)
  }
  for (const event of ['insert', 'delete']) await sql`drop function if exists ${sql.id(`tracewell_score_rollups_${event}`)}()`.execute(db)
  await sql`drop function if exists tracewell_add_score_rollups(tracewell_score_fact[], integer)`.execute(db)
  await sql`drop type if exists tracewell_score_fact`.execute(db)
  await sql`drop table if exists score_rollups`.execute(db)
  await sql`drop function if exists tracewell_trace_whole_keys(text, text[], text[])`.execute(db)
  await sql`drop function if exists tracewell_histogram_add(integer[], integer[], integer)`.execute(db)
  await sql`delete from usage_rollups where dimension in ('session', 'prompt', 'tag')`.execute(db)
  await sql`alter table usage_rollups drop column if exists error_traces, drop column if exists durations`.execute(db)
  await sql`alter table trace_summaries drop column if exists prompts, drop column if exists tags`.execute(db)
}
