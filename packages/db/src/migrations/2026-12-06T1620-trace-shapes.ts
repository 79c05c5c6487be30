import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// A dashboard widget with two filters ("tokens of gpt-4o in svc-2", issue 45 §3) measures the
// traces that match both, which no rollup row of one dimension holds: it read every trace summary
// of the window (416,000 a month of the measured project in bench:dashboards, 0.5 s and more).
// A trace's shape is the combination of its models, response models, vendors and services; the
// 'shape' rows of usage_rollups hold, an hour and shape, the figures of the whole traces of that
// shape (traces, error traces, durations, spans, errors, tokens, cost), as the session, prompt and
// tag rows do. An application has few shapes (20 an hour in the bench), so any filters and groups
// among model, vendor and service read those few rows and match each shape as the trace list
// matches a trace. Traces whose root is Tracewell's own service are left out, as the metric engine
// leaves them out of the summaries it reads.
//
// The value is JSON text of the four arrays, as the fold writes it (JSON.stringify of the
// summary's sorted arrays); tracewell_trace_shape gives the same text from a summary's columns,
// for this backfill, the erasure's and the check's recomputations. Run with the writers stopped.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function tracewell_trace_shape(models text[], response_models text[], vendors text[], services text[]) returns text
    language sql immutable parallel safe as $$
      select '[' || array_to_json(coalesce(models, '{}'))::text || ',' || array_to_json(coalesce(response_models, '{}'))::text || ','
        || array_to_json(coalesce(vendors, '{}'))::text || ',' || array_to_json(coalesce(services, '{}'))::text || ']'
    $$`.execute(db)
  await backfillTraceShapes(db)
}

/** Every stored trace's shape rows, a UTC day at a time (also what bench:dashboards loads them with). */
export async function backfillTraceShapes(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(start_time), 'UTC') as first, max(start_time) as last from trace_summaries`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  for (let day = first ? new Date(first) : null; day !== null && last && day <= last; day = new Date(day.getTime() + 86_400_000)) {
    await sql`
      with t as (
        select t.project_id, date_trunc('hour', t.start_time, 'UTC') as hour,
          tracewell_trace_shape(t.models, t.response_models, t.vendors, t.services) as value,
          case when t.duration_us < 1 then 0 else least(127, floor(4 * ln(t.duration_us) / ln(2)))::int end as bucket,
          t.span_count, t.error_count, t.input_tokens, t.output_tokens, t.cost_usd
        from trace_summaries t
        where t.start_time >= ${day} and t.start_time < ${new Date(day.getTime() + 86_400_000)} and t.service_name is distinct from 'tracewell'
      ),
      counts as (select project_id, hour, value, bucket, count(*)::int as n from t group by 1, 2, 3, 4),
      -- Each row's buckets from its lowest to its highest, subscripted by bucket (the rows' one form).
      histograms as (
        select k.project_id, k.hour, k.value, ('[' || k.lo || ':' || k.hi || ']=' || array_agg(coalesce(c.n, 0) order by i)::text)::integer[] as durations
        from (select project_id, hour, value, min(bucket) as lo, max(bucket) as hi from counts group by 1, 2, 3) k
        cross join lateral generate_series(k.lo, k.hi) as i
        left join counts c on c.project_id = k.project_id and c.hour = k.hour and c.value = k.value and c.bucket = i
        group by k.project_id, k.hour, k.value, k.lo, k.hi
      ),
      figures as (
        select project_id, hour, value, count(*)::int as traces, (count(*) filter (where error_count > 0))::int as error_traces,
          sum(span_count)::int as spans, sum(error_count)::int as errors, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
          sum(cost_usd) as cost_usd
        from t group by 1, 2, 3
      )
      insert into usage_rollups as u (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency, error_traces, durations)
      select f.project_id, 'shape', f.hour, f.value, f.traces, f.spans, f.errors, f.input_tokens, f.output_tokens, f.cost_usd, '{}', f.error_traces, h.durations
      from figures f join histograms h using (project_id, hour, value)
      order by 1, 3, 4
      on conflict (project_id, dimension, hour, value) do update set traces = excluded.traces, spans = excluded.spans, errors = excluded.errors,
        input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd,
        error_traces = excluded.error_traces, durations = excluded.durations`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from usage_rollups where dimension = 'shape'`.execute(db)
  await sql`drop function if exists tracewell_trace_shape(text[], text[], text[], text[])`.execute(db)
}
