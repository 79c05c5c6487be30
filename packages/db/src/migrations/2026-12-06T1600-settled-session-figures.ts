import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// session_figures (migration 2026-12-06T1500) made every fold of a trace with a session update its
// session's row through a row trigger: 13 index insertions and 3 percentiles a trace, about 100 µs
// (bench:fold). Most of those rows are the current day's. Now session_figures holds the sums of the
// 'session' rows of the hours before a boundary only, the settled hours (session_figures_settled,
// the start of a UTC day): the trigger fires for the rows of those hours alone (late data, erasure's
// lowering, retention's row deletes), and the hours after it are read from their hourly rows
// (session-ranking.ts), as few as a day's. tracewell_settle_session_figures moves the boundary to
// a later day, adding the hours it passes in one statement; the fold calls it once the day has
// turned (summary-fold.ts).
//
// The invariant: a session's row holds the sums of its 'session' rows before the boundary, and its
// first and last hours bound those rows; its open_from is at or before the first of its rows from
// the boundary on, or null when it has none (a session with a row on both sides is read from its
// hourly rows: an index of the few rows with open_from finds them, where a lookup of each of the
// day's sessions took 40–60 ms in bench:dashboards). open_from may be set where there is no such
// row (a row made by late data takes the boundary, as it may have later rows): it only costs a
// read, until the next move recomputes them all. The boundary moves with usage_rollups locked
// against writes, so that no row is written between the hours added and the boundary moved.

/** The settled hours' figures, where T1500's trigger kept every hour's: its triggers are made anew with this condition. */
const SETTLED = (row: 'new' | 'old') => `${row}.dimension = 'session' and ${row}.value <> '' and ${row}.hour < tracewell_session_figures_settled_until()`

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table session_figures_settled (
      one boolean primary key default true check (one),
      settled_until timestamptz not null
    )`.execute(db)
  // The trigger's condition reads it for each 'session' row written: a SQL function planned once a statement.
  await sql`create function tracewell_session_figures_settled_until() returns timestamptz language sql stable parallel safe as $$
    select settled_until from session_figures_settled $$`.execute(db)
  await sql`alter table session_figures add column open_from timestamptz`.execute(db)
  // Only rows made from now on (by late data, before a later row's trigger finds them): a stable default is not stored in the rows there are.
  await sql`alter table session_figures alter column open_from set default tracewell_session_figures_settled_until()`.execute(db)
  await sql`create index session_figures_open on session_figures (project_id) where open_from is not null`.execute(db)
  // A session's first row of an hour from the boundary on marks its settled row, if it has one.
  await sql`
    create function tracewell_session_figures_opened() returns trigger language plpgsql as $$
    begin
      update session_figures set open_from = least(open_from, new.hour)
      where project_id = new.project_id and session_id = new.value and (open_from is null or open_from > new.hour);
      return null;
    end $$`.execute(db)
  // Every session's open_from anew: from its first row from the boundary on (those rows are the day's so far).
  await sql`
    create function tracewell_session_figures_mark_open() returns void language sql as $$
      update session_figures set open_from = null where open_from is not null;
      update session_figures f set open_from = o.first_open
      from (
        select project_id, value, min(hour) as first_open from usage_rollups
        where dimension = 'session' and value <> '' and hour >= tracewell_session_figures_settled_until() group by 1, 2
      ) o
      where f.project_id = o.project_id and f.session_id = o.value
    $$`.execute(db)
  // Histograms summed bucket by bucket, as the trigger adds them one by one.
  await sql`create aggregate tracewell_histogram_sum(integer[], integer) (sfunc = tracewell_histogram_add, stype = integer[], initcond = '{}')`.execute(db)
  await sql`
    create function tracewell_settle_session_figures(until timestamptz) returns void language plpgsql as $$
    declare
      settled timestamptz;
    begin
      if tracewell_session_figures_settled_until() >= until then return; end if;
      -- No writer of usage_rollups (the fold, erasure, retention) between the hours read and the
      -- boundary moved; readers go on. Self-exclusive: a second settler waits and finds it done.
      lock table usage_rollups in share row exclusive mode;
      select settled_until into settled from session_figures_settled for update;
      if settled >= until then return; end if;
      insert into session_figures as f (project_id, session_id, first_hour, last_hour, traces, error_traces, spans, errors,
        input_tokens, output_tokens, cost_usd, durations)
      select project_id, value, min(hour), max(hour), sum(traces)::int, sum(error_traces)::int, sum(spans)::int, sum(errors)::int,
        coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cost_usd), 0), tracewell_histogram_sum(durations, 1)
      from usage_rollups
      where dimension = 'session' and value <> '' and hour >= settled and hour < until
      group by project_id, value
      having sum(traces) <> 0 or sum(spans) <> 0
      order by 1, 2
      on conflict (project_id, session_id) do update set
        first_hour = least(f.first_hour, excluded.first_hour), last_hour = greatest(f.last_hour, excluded.last_hour),
        traces = f.traces + excluded.traces, error_traces = f.error_traces + excluded.error_traces, spans = f.spans + excluded.spans,
        errors = f.errors + excluded.errors, input_tokens = f.input_tokens + excluded.input_tokens,
        output_tokens = f.output_tokens + excluded.output_tokens, cost_usd = f.cost_usd + excluded.cost_usd,
        durations = tracewell_histogram_add(f.durations, excluded.durations, 1);
      update session_figures_settled set settled_until = until;
      perform tracewell_session_figures_mark_open();
    end $$`.execute(db)

  await sql`lock table usage_rollups in share row exclusive mode`.execute(db)
  // Settled up to today's start (UTC): the hours from it are taken back out of the sessions' rows,
  // whose last hour then bounds the settled ones.
  await sql`insert into session_figures_settled (settled_until) values (date_bin('1 day', clock_timestamp(), timestamptz '2000-01-01 00:00:00+00'))`.execute(db)
  await sql`
    with open as (
      select project_id, value as session_id, min(hour) as first_open, sum(traces)::int as traces, sum(error_traces)::int as error_traces, sum(spans)::int as spans,
        sum(errors)::int as errors, coalesce(sum(input_tokens), 0) as input_tokens, coalesce(sum(output_tokens), 0) as output_tokens,
        coalesce(sum(cost_usd), 0) as cost_usd, tracewell_histogram_sum(durations, 1) as durations
      from usage_rollups
      where dimension = 'session' and value <> '' and hour >= tracewell_session_figures_settled_until()
      group by 1, 2
    )
    update session_figures f set
      last_hour = least(f.last_hour, tracewell_session_figures_settled_until() - interval '1 hour'),
      traces = f.traces - o.traces, error_traces = f.error_traces - o.error_traces, spans = f.spans - o.spans, errors = f.errors - o.errors,
      input_tokens = f.input_tokens - o.input_tokens, output_tokens = f.output_tokens - o.output_tokens, cost_usd = f.cost_usd - o.cost_usd,
      durations = tracewell_histogram_add(f.durations, o.durations, -1), open_from = o.first_open
    from open o where f.project_id = o.project_id and f.session_id = o.session_id`.execute(db)
  await sql`delete from session_figures where traces = 0 and spans = 0`.execute(db)

  for (const event of ['insert', 'update', 'delete'] as const) {
    await sql`drop trigger ${sql.id(`usage_rollups_session_${event}`)} on usage_rollups`.execute(db)
    await sql`create trigger ${sql.id(`usage_rollups_session_${event}`)} after ${sql.raw(event)} on usage_rollups for each row
      when (${sql.raw(SETTLED(event === 'delete' ? 'old' : 'new'))}) execute function tracewell_session_figures_change()`.execute(db)
  }
  await sql`create trigger usage_rollups_session_open after insert on usage_rollups for each row
    when (new.dimension = 'session' and new.value <> '' and new.hour >= tracewell_session_figures_settled_until())
    execute function tracewell_session_figures_opened()`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Every hour settled, then T1500's triggers of every hour.
  await sql`select tracewell_settle_session_figures('infinity')`.execute(db)
  await sql`drop trigger usage_rollups_session_open on usage_rollups`.execute(db)
  await sql`drop function tracewell_session_figures_opened()`.execute(db)
  await sql`alter table session_figures drop column open_from`.execute(db)
  for (const event of ['insert', 'update', 'delete'] as const) {
    const row = event === 'delete' ? 'old' : 'new'
    await sql`drop trigger if exists ${sql.id(`usage_rollups_session_${event}`)} on usage_rollups`.execute(db)
    await sql`create trigger ${sql.id(`usage_rollups_session_${event}`)} after ${sql.raw(event)} on usage_rollups for each row
      when (${sql.raw(`${row}.dimension = 'session' and ${row}.value <> ''`)}) execute function tracewell_session_figures_change()`.execute(db)
  }
  await sql`drop function tracewell_settle_session_figures(timestamptz)`.execute(db)
  await sql`drop function tracewell_session_figures_mark_open()`.execute(db)
  await sql`drop aggregate tracewell_histogram_sum(integer[], integer)`.execute(db)
  await sql`drop function tracewell_session_figures_settled_until()`.execute(db)
  await sql`drop table session_figures_settled`.execute(db)
}
