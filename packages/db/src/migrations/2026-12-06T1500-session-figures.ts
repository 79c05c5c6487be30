import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// Dashboards grouped by session over 30 days (issue 45 §3) ranked every session's hourly rows of
// the window (a session lies in one day, so its rows of the day are as many as its rows of the
// hour: 250,000 a month in bench:dashboards). session_figures holds one row a session (but the
// session '' of traces without one) with the sums of all its 'session' rows: traces, error traces,
// spans, errors, tokens and cost (unknown counted as 0: they only rank), the durations' histogram,
// and the first and last hour it has a row in. A session whose hours lie in a window has these as
// its figures over the window; indexes by project, first day and figure give the top sessions of
// each day in a few rows, without statistics (autovacuum may be off).
//
// Kept by a trigger on usage_rollups' 'session' rows: whatever writes them (the fold, erasure's
// lowering, retention's row deletes, a backfill) adds the row's change; a row left without traces
// and spans is deleted. The first and last hours only widen (a row lowered to nothing leaves them):
// they bound the session's rows, which is all the metric engine relies on (metric-rollups.ts).
// Retention's partition drops delete a day's 'session' rows first, so that the trigger sees them go.
// A row trigger with a condition, not a statement trigger with transition tables: those fired at
// every statement of every dimension and cost a fold far more (bench:fold, 980–1,080 µs a trace
// with sessions against 249–364 with this; docs/benchmarks.md).

/** latencyBucketMs of every bucket, as the metric engine's literal (bucket i's geometric middle, ms). */
const BUCKET_MS = `{${Array.from({ length: 128 }, (_, bucket) => 2 ** ((bucket + 0.5) / 4) / 1000).join(',')}}`

/**
 * The figures sessions are ranked by (metric-rollups.ts): as the metric engine computes them from
 * the hourly rows, the order the index keeps (null as 0), and which rows have one at all.
 */
const RANKED: Record<string, { value: string; order: string; where?: string }> = {
  cost: { value: 'cost_usd::float8', order: 'cost_usd::float8' },
  tokens: { value: '(input_tokens + output_tokens)::float8', order: '(input_tokens + output_tokens)::float8' },
  input_tokens: { value: 'input_tokens::float8', order: 'input_tokens::float8' },
  output_tokens: { value: 'output_tokens::float8', order: 'output_tokens::float8' },
  traces: { value: 'traces::float8', order: 'traces::float8' },
  spans: { value: 'spans::float8', order: 'spans::float8' },
  error_rate: { value: 'error_traces::float8 / nullif(traces, 0)', order: 'coalesce(error_traces::float8 / nullif(traces, 0), 0)' },
  ...Object.fromEntries(([['latency_p50', '0.5'], ['latency_p95', '0.95'], ['latency_p99', '0.99']] as const).map(([metric, q]) => [metric, {
    value: `tracewell_histogram_percentile(durations, ${q})`,
    order: `coalesce(tracewell_histogram_percentile(durations, ${q}), 0)`,
    where: 'cardinality(durations) > 0',
  }])),
}

export async function up(db: Kysely<unknown>): Promise<void> {
  // A percentile of a histogram as the metric engine computes it (percentileCells), operation for
  // operation on the same doubles: the figure a window's rows give, from the session's one row.
  await sql`
    create function tracewell_histogram_percentile(durations integer[], q float8) returns float8
    language plpgsql immutable parallel safe as $$
    declare
      total float8 := 0;
      seen float8 := 0;
      rank float8;
      low integer;
      high integer;
      last integer;
    begin
      if durations is null or cardinality(durations) = 0 then return null; end if;
      for i in array_lower(durations, 1)..array_upper(durations, 1) loop
        if durations[i] > 0 then total := total + durations[i]; last := i; end if;
      end loop;
      if total = 0 then return null; end if;
      rank := q * (total - 1);
      for i in array_lower(durations, 1)..array_upper(durations, 1) loop
        if durations[i] > 0 then
          seen := seen + durations[i];
          if low is null and seen > floor(rank) then low := i; end if;
          if high is null and seen > ceil(rank) then high := i; end if;
        end if;
      end loop;
      low := coalesce(low, last);
      high := coalesce(high, last);
      -- The literal in the expression (planned once a session), not in a variable: an array of 128
      -- assigned to a variable was built at every call (60 µs a call, against 9).
      return (${sql.lit(BUCKET_MS)}::float8[])[low + 1]
        + (rank - floor(rank)) * ((${sql.lit(BUCKET_MS)}::float8[])[high + 1] - (${sql.lit(BUCKET_MS)}::float8[])[low + 1]);
    end $$`.execute(db)
  await sql`
    create table session_figures (
      project_id text not null,
      session_id text collate "C" not null,
      first_hour timestamptz not null,
      last_hour timestamptz not null,
      first_day timestamptz not null generated always as (date_bin('1 day', first_hour, timestamptz '2000-01-01 00:00:00+00')) stored,
      traces integer not null,
      error_traces integer not null,
      spans integer not null,
      errors integer not null,
      input_tokens bigint not null,
      output_tokens bigint not null,
      cost_usd numeric not null,
      durations integer[] not null,
      primary key (project_id, session_id)
    )`.execute(db)
  await backfillSessionFigures(db)
  for (const [metric, figure] of Object.entries(RANKED)) {
    await sql`create index ${sql.id(`session_figures_by_${metric}`)} on session_figures (project_id, first_day, (${sql.raw(figure.order)}) desc, session_id)`.execute(db)
    // A day's top sessions by the figure, read in the index's order: planned apart with bitmap scans
    // and sorts off, since without statistics (autovacuum off) a day's rows look few, and a bitmap
    // scan of any index on (project_id, first_day) and a sort of them (8,000 a day in
    // bench:dashboards, 10 ms) were planned as cheaper than the first rows of this index.
    await sql`
      create function ${sql.id(`tracewell_top_sessions_by_${metric}`)}(project text, day timestamptz, window_from timestamptz, window_to timestamptz, n integer)
      returns table (session_id text, figure float8)
      language sql stable set enable_bitmapscan = off set enable_sort = off as $$
        select f.session_id, ${sql.raw(figure.value)} from session_figures f
        where f.project_id = project and f.first_day = day and f.first_hour >= window_from and f.last_hour < window_to${sql.raw(figure.where ? ` and ${figure.where}` : '')}
        order by ${sql.raw(figure.order)} desc, f.session_id limit n
      $$`.execute(db)
  }
  // The sessions that may cross a window's edge: those that began up to the longest session's length before it.
  await sql`create index session_figures_by_first_hour on session_figures (project_id, first_hour)`.execute(db)
  await sql`create index session_figures_by_length on session_figures (project_id, (last_hour - first_hour) desc)`.execute(db)
  await sql`
    create function tracewell_session_figures_change() returns trigger language plpgsql as $$
    declare
      key_row usage_rollups;
      left_traces integer;
      left_spans integer;
    begin
      key_row := case when tg_op = 'DELETE' then old else new end;
      insert into session_figures as f (project_id, session_id, first_hour, last_hour, traces, error_traces, spans, errors,
        input_tokens, output_tokens, cost_usd, durations)
      values (key_row.project_id, key_row.value, key_row.hour, key_row.hour,
        case when tg_op = 'DELETE' then 0 else new.traces end - case when tg_op = 'INSERT' then 0 else old.traces end,
        case when tg_op = 'DELETE' then 0 else new.error_traces end - case when tg_op = 'INSERT' then 0 else old.error_traces end,
        case when tg_op = 'DELETE' then 0 else new.spans end - case when tg_op = 'INSERT' then 0 else old.spans end,
        case when tg_op = 'DELETE' then 0 else new.errors end - case when tg_op = 'INSERT' then 0 else old.errors end,
        case when tg_op = 'DELETE' then 0 else coalesce(new.input_tokens, 0) end - case when tg_op = 'INSERT' then 0 else coalesce(old.input_tokens, 0) end,
        case when tg_op = 'DELETE' then 0 else coalesce(new.output_tokens, 0) end - case when tg_op = 'INSERT' then 0 else coalesce(old.output_tokens, 0) end,
        case when tg_op = 'DELETE' then 0 else coalesce(new.cost_usd, 0) end - case when tg_op = 'INSERT' then 0 else coalesce(old.cost_usd, 0) end,
        tracewell_histogram_add(case when tg_op = 'DELETE' then '{}' else new.durations end, case when tg_op = 'INSERT' then '{}' else old.durations end, -1))
      on conflict (project_id, session_id) do update set
        first_hour = least(f.first_hour, excluded.first_hour), last_hour = greatest(f.last_hour, excluded.last_hour),
        traces = f.traces + excluded.traces, error_traces = f.error_traces + excluded.error_traces, spans = f.spans + excluded.spans,
        errors = f.errors + excluded.errors, input_tokens = f.input_tokens + excluded.input_tokens,
        output_tokens = f.output_tokens + excluded.output_tokens, cost_usd = f.cost_usd + excluded.cost_usd,
        durations = tracewell_histogram_add(f.durations, excluded.durations, 1)
      returning traces, spans into left_traces, left_spans;
      if left_traces = 0 and left_spans = 0 then
        delete from session_figures where project_id = key_row.project_id and session_id = key_row.value;
      end if;
      return null;
    end $$`.execute(db)
  await sql`create trigger usage_rollups_session_insert after insert on usage_rollups for each row
    when (new.dimension = 'session' and new.value <> '') execute function tracewell_session_figures_change()`.execute(db)
  await sql`create trigger usage_rollups_session_update after update on usage_rollups for each row
    when (new.dimension = 'session' and new.value <> '') execute function tracewell_session_figures_change()`.execute(db)
  await sql`create trigger usage_rollups_session_delete after delete on usage_rollups for each row
    when (old.dimension = 'session' and old.value <> '') execute function tracewell_session_figures_change()`.execute(db)
}

/**
 * Every session's row, from its 'session' rows (also what bench:dashboards loads them with): run
 * it before the trigger exists, or on an empty table with the writers stopped.
 */
export async function backfillSessionFigures(db: AnyDb): Promise<void> {
  await sql`
    with h as (select * from usage_rollups where dimension = 'session' and value <> ''),
    counts as (
      select h.project_id, h.value, array_lower(h.durations, 1) + d.o::int - 1 as bucket, sum(d.n)::int as n
      from h, unnest(h.durations) with ordinality as d(n, o) group by 1, 2, 3 having sum(d.n) <> 0
    ),
    histograms as (
      select k.project_id, k.value, ('[' || k.lo || ':' || k.hi || ']=' || array_agg(coalesce(c.n, 0) order by i)::text)::integer[] as durations
      from (select project_id, value, min(bucket) as lo, max(bucket) as hi from counts group by 1, 2) k
      cross join lateral generate_series(k.lo, k.hi) as i
      left join counts c on c.project_id = k.project_id and c.value = k.value and c.bucket = i
      group by k.project_id, k.value, k.lo, k.hi
    ),
    figures as (
      select project_id, value, min(hour) as first_hour, max(hour) as last_hour, sum(traces)::int as traces, sum(error_traces)::int as error_traces,
        sum(spans)::int as spans, sum(errors)::int as errors, coalesce(sum(input_tokens), 0) as input_tokens,
        coalesce(sum(output_tokens), 0) as output_tokens, coalesce(sum(cost_usd), 0) as cost_usd
      from h group by 1, 2
      having sum(traces) <> 0 or sum(spans) <> 0
    )
    insert into session_figures (project_id, session_id, first_hour, last_hour, traces, error_traces, spans, errors, input_tokens, output_tokens, cost_usd, durations)
    select f.project_id, f.value, f.first_hour, f.last_hour, f.traces, f.error_traces, f.spans, f.errors, f.input_tokens, f.output_tokens, f.cost_usd,
      coalesce(hs.durations, '{}')
    from figures f left join histograms hs using (project_id, value)
    order by 1, 2`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`usage_rollups_session_${event}`)} on usage_rollups`.execute(db)
  await sql`drop function if exists tracewell_session_figures_change()`.execute(db)
  for (const metric of Object.keys(RANKED)) {
    await sql`drop function if exists ${sql.id(`tracewell_top_sessions_by_${metric}`)}(text, timestamptz, timestamptz, timestamptz, integer)`.execute(db)
  }
  await sql`drop table if exists session_figures`.execute(db)
  await sql`drop function if exists tracewell_histogram_percentile(integer[], float8)`.execute(db)
}
