import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// Dashboards grouped by user over 30 days (issue 45 §3) rank the users by their figures over the
// window, read from a row a user and day ('user.day', migration 2026-12-06T0820) for the whole
// days: 29 rows a user, whose histograms are most of a percentile's ranking. user_week_figures
// holds a row a user and UTC week (Monday to Monday) with the sums of that user's rows of the
// week's days: traces, error traces, spans, errors, tokens and cost (unknown counted as 0: they
// only rank) and the durations' histogram, so that a window's whole weeks read a row a user.
//
// Kept by a trigger on usage_rollups' 'user.day' rows, as session_figures is on the session rows
// (migration 2026-12-06T1500): whatever writes them (the fold, erasure's lowering, retention's row
// deletes, a backfill) adds the row's change; a row left without traces and spans is deleted.
// Retention's partition drops delete a day's 'user.day' rows first, so that the trigger sees them go.
// A table of its own, not rows of usage_rollups: a week's row would live in its Monday's day
// partition and go with it while the week's later days stay.
//
// And an index of the users' hourly rows by user, then hour: the 50 users a dashboard keeps have
// their points read as a range each (of every day partition of the window), where every hour of
// the window was probed for the 50 (36,000 descents of the member index for a 30-day window).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table user_week_figures (
      project_id text not null,
      week timestamptz not null,
      user_id text not null,
      traces integer not null,
      error_traces integer not null,
      spans integer not null,
      errors integer not null,
      input_tokens bigint not null,
      output_tokens bigint not null,
      cost_usd numeric not null,
      durations integer[] not null,
      primary key (project_id, week, user_id)
    )`.execute(db)
  await backfillUserWeekFigures(db)
  await sql`
    create index if not exists usage_rollups_user_hours on usage_rollups (project_id, value, hour)
    include (traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations)
    where dimension = 'user'`.execute(db)
  await sql`
    create function tracewell_user_week_figures_change() returns trigger language plpgsql as $$
    declare
      key_row usage_rollups;
      week_start timestamptz;
      left_traces integer;
      left_spans integer;
    begin
      key_row := case when tg_op = 'DELETE' then old else new end;
      week_start := date_bin('7 days', key_row.hour, timestamptz '2000-01-03 00:00:00+00');
      insert into user_week_figures as w (project_id, week, user_id, traces, error_traces, spans, errors, input_tokens, output_tokens, cost_usd, durations)
      values (key_row.project_id, week_start, key_row.value,
        case when tg_op = 'DELETE' then 0 else new.traces end - case when tg_op = 'INSERT' then 0 else old.traces end,
        case when tg_op = 'DELETE' then 0 else new.error_traces end - case when tg_op = 'INSERT' then 0 else old.error_traces end,
        case when tg_op = 'DELETE' then 0 else new.spans end - case when tg_op = 'INSERT' then 0 else old.spans end,
        case when tg_op = 'DELETE' then 0 else new.errors end - case when tg_op = 'INSERT' then 0 else old.errors end,
        case when tg_op = 'DELETE' then 0 else coalesce(new.input_tokens, 0) end - case when tg_op = 'INSERT' then 0 else coalesce(old.input_tokens, 0) end,
        case when tg_op = 'DELETE' then 0 else coalesce(new.output_tokens, 0) end - case when tg_op = 'INSERT' then 0 else coalesce(old.output_tokens, 0) end,
        case when tg_op = 'DELETE' then 0 else coalesce(new.cost_usd, 0) end - case when tg_op = 'INSERT' then 0 else coalesce(old.cost_usd, 0) end,
        tracewell_histogram_add(case when tg_op = 'DELETE' then '{}' else new.durations end, case when tg_op = 'INSERT' then '{}' else old.durations end, -1))
      on conflict (project_id, week, user_id) do update set
        traces = w.traces + excluded.traces, error_traces = w.error_traces + excluded.error_traces, spans = w.spans + excluded.spans,
        errors = w.errors + excluded.errors, input_tokens = w.input_tokens + excluded.input_tokens,
        output_tokens = w.output_tokens + excluded.output_tokens, cost_usd = w.cost_usd + excluded.cost_usd,
        durations = tracewell_histogram_add(w.durations, excluded.durations, 1)
      returning traces, spans into left_traces, left_spans;
      if left_traces = 0 and left_spans = 0 then
        delete from user_week_figures where project_id = key_row.project_id and week = week_start and user_id = key_row.value;
      end if;
      return null;
    end $$`.execute(db)
  await sql`create trigger usage_rollups_user_day_insert after insert on usage_rollups for each row
    when (new.dimension = 'user.day') execute function tracewell_user_week_figures_change()`.execute(db)
  await sql`create trigger usage_rollups_user_day_update after update on usage_rollups for each row
    when (new.dimension = 'user.day') execute function tracewell_user_week_figures_change()`.execute(db)
  await sql`create trigger usage_rollups_user_day_delete after delete on usage_rollups for each row
    when (old.dimension = 'user.day') execute function tracewell_user_week_figures_change()`.execute(db)
}

/**
 * Every user's rows of the week, from their rows of the day (also what bench:dashboards loads them
 * with): run it before the trigger exists, or on an empty table with the writers stopped.
 */
export async function backfillUserWeekFigures(db: AnyDb): Promise<void> {
  await sql`
    with d as (
      select project_id, date_bin('7 days', hour, timestamptz '2000-01-03 00:00:00+00') as week, value, traces, error_traces, spans, errors,
        input_tokens, output_tokens, cost_usd, durations
      from usage_rollups where dimension = 'user.day'
    ),
    counts as (
      select d.project_id, d.week, d.value, array_lower(d.durations, 1) + x.o::int - 1 as bucket, sum(x.n)::int as n
      from d, unnest(d.durations) with ordinality as x(n, o) group by 1, 2, 3, 4 having sum(x.n) <> 0
    ),
    -- Each user's buckets from the lowest to the highest not 0, subscripted by bucket (the rows' one form).
    histograms as (
      select k.project_id, k.week, k.value, ('[' || k.lo || ':' || k.hi || ']=' || array_agg(coalesce(c.n, 0) order by i)::text)::integer[] as durations
      from (select project_id, week, value, min(bucket) as lo, max(bucket) as hi from counts group by 1, 2, 3) k
      cross join lateral generate_series(k.lo, k.hi) as i
      left join counts c on c.project_id = k.project_id and c.week = k.week and c.value = k.value and c.bucket = i
      group by k.project_id, k.week, k.value, k.lo, k.hi
    ),
    figures as (
      select project_id, week, value, sum(traces)::int as traces, sum(error_traces)::int as error_traces, sum(spans)::int as spans,
        sum(errors)::int as errors, coalesce(sum(input_tokens), 0) as input_tokens, coalesce(sum(output_tokens), 0) as output_tokens,
        coalesce(sum(cost_usd), 0) as cost_usd
      from d group by 1, 2, 3
      having sum(traces) <> 0 or sum(spans) <> 0
    )
    insert into user_week_figures (project_id, week, user_id, traces, error_traces, spans, errors, input_tokens, output_tokens, cost_usd, durations)
    select f.project_id, f.week, f.value, f.traces, f.error_traces, f.spans, f.errors, f.input_tokens, f.output_tokens, f.cost_usd,
      coalesce(h.durations, '{}')
    from figures f left join histograms h using (project_id, week, value)
    order by 1, 2, 3`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`usage_rollups_user_day_${event}`)} on usage_rollups`.execute(db)
  await sql`drop function if exists tracewell_user_week_figures_change()`.execute(db)
  await sql`drop table if exists user_week_figures`.execute(db)
  await sql`drop index if exists usage_rollups_user_hours`.execute(db)
}
