import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// Users and sessions by model, vendor, service, prompt, tag or user (issue 45 §3) counted distinct
// members over a month of trace_summaries (416,000 rows for bench:dashboards' project, with an
// unnest of the group's array): 1.0–2.6 s a widget. group_member_days holds, a row a project, UTC
// day, dimension and value (null: the traces without one), how many distinct users and sessions
// had each set of hours of the day (a 24-bit mask, bit h: a trace of theirs with that value
// started in hour h; most sessions lie in one hour, so a few hundred masks stand for thousands),
// and the hours any trace of the value started in: a point within a day adds the counts of the
// masks meeting its hours, no distinct needed, and a month of one dimension is ~150 rows (30,000
// by user). Not by
// session: a row a session and day (241,000 a month there) read in 1.1 s, no better than the summaries.
//
// The rows are built from the summaries once a day is settled (before yesterday's start, UTC, so
// that the spans of traces begun before midnight have come), never by the fold trace by trace
// (issue 49 wants the writer's CPU a span down). A day is read from its rows only while its mark
// says `built`: triggers on trace_summaries clear the mark of a settled day whose summaries change
// in what the rows hold (late data, erasure, retention), and the metric engine reads such a day, as
// it reads today and yesterday, from the summaries. tracewell_settle_group_member_days, which the
// fold calls, builds the days the boundary passed since it last ran and rebuilds the marked ones.
//
// The backfill builds every settled day with the summaries' writers locked out: 107 s for the
// 10-million-span seed of bench:dashboards at load 3–6 (docs/benchmarks.md), 32 MB.

/** The start of yesterday (UTC) by the clock at the time of the call: the days before it are settled. */
const BOUNDARY = `date_bin('1 day', clock_timestamp(), timestamptz '2000-01-01 00:00:00+00') - interval '1 day'`
const DAY_OF = (time: string) => `date_bin('1 day', ${time}, timestamptz '2000-01-01 00:00:00+00')`
/** What a row is built from: a change elsewhere (tokens, cost, duration) leaves the day's rows as they are. */
const KEPT = (row: 'old' | 'new') => `(${row}.start_time, ${row}.user_id, ${row}.session_id, ${row}.models, ${row}.vendors, ${row}.services, ${row}.prompts, ${row}.tags, ${row}.service_name)`

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table group_member_days (
      project_id text not null,
      day timestamptz not null,
      dimension text not null,
      value text,
      hours integer not null,
      user_masks integer[] not null,
      user_counts integer[] not null,
      session_masks integer[] not null,
      session_counts integer[] not null
    )`.execute(db)
  await sql`create unique index group_member_days_key on group_member_days (project_id, dimension, day, value) nulls not distinct`.execute(db)
  await sql`
    create table group_member_day_marks (
      project_id text not null,
      day timestamptz not null,
      built boolean not null,
      primary key (project_id, day)
    )`.execute(db)
  await sql`create index group_member_day_marks_unbuilt on group_member_day_marks (day) where not built`.execute(db)
  await sql`
    create table group_member_days_settled (
      one boolean primary key default true check (one),
      settled_until timestamptz not null
    )`.execute(db)

  // One project's days [from, until) anew from its summaries, and their marks built. Tracewell's
  // own calls are left out, as the metric engine leaves them out.
  await sql`
    create function tracewell_build_group_member_days(project text, from_day timestamptz, until_day timestamptz) returns void language plpgsql as $$
    begin
      delete from group_member_days where project_id = project and dimension in ('model', 'vendor', 'service', 'prompt', 'tag', 'user')
        and day >= from_day and day < until_day;
      insert into group_member_days (project_id, day, dimension, value, hours, user_masks, user_counts, session_masks, session_counts)
      select project, day, dimension, value, bit_or(hours),
        coalesce(array_agg(hours order by hours) filter (where kind = 'user' and counted), '{}'),
        coalesce(array_agg(n order by hours) filter (where kind = 'user' and counted), '{}'),
        coalesce(array_agg(hours order by hours) filter (where kind = 'session' and counted), '{}'),
        coalesce(array_agg(n order by hours) filter (where kind = 'session' and counted), '{}')
      from (
        select day, dimension, value, kind, member is not null as counted, hours, count(*)::integer as n
        from (
          select r.day, r.dimension, r.value, k.kind, k.member, bit_or(r.bit) as hours
          from (
            select ${sql.raw(DAY_OF('t.start_time'))} as day, 1 << extract(hour from t.start_time at time zone 'UTC')::int as bit,
              t.user_id, t.session_id, d.dimension, g.value
            from trace_summaries t
            cross join lateral (values ('model', t.models), ('vendor', t.vendors), ('service', t.services), ('prompt', t.prompts), ('tag', t.tags),
              ('user', array[t.user_id])) as d(dimension, arr)
            cross join lateral unnest(case when coalesce(cardinality(d.arr), 0) = 0 then array[null::text] else d.arr end) as g(value)
            where t.project_id = project and t.start_time >= from_day and t.start_time < until_day and t.service_name is distinct from 'tracewell'
          ) r
          cross join lateral (values ('user', r.user_id), ('session', r.session_id)) as k(kind, member)
          group by 1, 2, 3, 4, 5
        ) m
        group by 1, 2, 3, 4, 5, 6
      ) h
      group by day, dimension, value;
      insert into group_member_day_marks (project_id, day, built)
      select project, d, true from generate_series(from_day, until_day - interval '1 day', interval '1 day') as g(d)
      on conflict (project_id, day) do update set built = true;
    end $$`.execute(db)

  // A settled day's mark cleared (or made, unbuilt, for a day the settle passed without traces).
  await sql`
    create function tracewell_unbuild_group_member_day(project text, at timestamptz) returns void language sql as $$
      insert into group_member_day_marks as m (project_id, day, built) values (project, ${sql.raw(DAY_OF('at'))}, false)
      on conflict (project_id, day) do update set built = false where m.built
    $$`.execute(db)
  await sql`
    create function tracewell_group_member_days_changed() returns trigger language plpgsql as $$
    begin
      if tg_op <> 'INSERT' and old.start_time < ${sql.raw(BOUNDARY)} then perform tracewell_unbuild_group_member_day(old.project_id, old.start_time); end if;
      if tg_op <> 'DELETE' and new.start_time < ${sql.raw(BOUNDARY)} then perform tracewell_unbuild_group_member_day(new.project_id, new.start_time); end if;
      return null;
    end $$`.execute(db)
  // A row moved to another partition fires its delete and insert triggers (not update's).
  await sql`create trigger trace_summaries_group_members_insert after insert on trace_summaries for each row
    when (new.start_time < ${sql.raw(BOUNDARY)}) execute function tracewell_group_member_days_changed()`.execute(db)
  await sql`create trigger trace_summaries_group_members_update after update on trace_summaries for each row
    when ((old.start_time < ${sql.raw(BOUNDARY)} or new.start_time < ${sql.raw(BOUNDARY)}) and ${sql.raw(KEPT('old'))} is distinct from ${sql.raw(KEPT('new'))})
    execute function tracewell_group_member_days_changed()`.execute(db)
  await sql`create trigger trace_summaries_group_members_delete after delete on trace_summaries for each row
    when (old.start_time < ${sql.raw(BOUNDARY)}) execute function tracewell_group_member_days_changed()`.execute(db)

  // The days from the last boundary to the current one built, then those marked since. Locks out
  // the summaries' writers (the fold, erasure, retention) meanwhile, readers go on; a second
  // settler waits and finds it done. Cheap when the boundary has not moved: the fold calls it.
  await sql`
    create function tracewell_settle_group_member_days() returns void language plpgsql as $$
    declare
      settled timestamptz;
      until_day timestamptz;
      p record;
    begin
      select settled_until into settled from group_member_days_settled;
      if settled >= ${sql.raw(BOUNDARY)} then return; end if;
      lock table trace_summaries in share row exclusive mode;
      select settled_until into settled from group_member_days_settled for update;
      until_day := ${sql.raw(BOUNDARY)};
      if settled >= until_day then return; end if;
      for p in select distinct project_id from trace_summaries where start_time >= settled and start_time < until_day loop
        perform tracewell_build_group_member_days(p.project_id, settled, until_day);
      end loop;
      perform tracewell_rebuild_group_member_days();
      update group_member_days_settled set settled_until = until_day;
    end $$`.execute(db)
  // The settled days marked unbuilt, built anew.
  await sql`
    create function tracewell_rebuild_group_member_days() returns void language plpgsql as $$
    declare
      d record;
    begin
      for d in select project_id, day from group_member_day_marks where not built and day < ${sql.raw(BOUNDARY)} loop
        perform tracewell_build_group_member_days(d.project_id, d.day, d.day + interval '1 day');
      end loop;
    end $$`.execute(db)

  // Every settled day of every project built now, the writers kept out until the marks are kept.
  await sql`lock table trace_summaries in share row exclusive mode`.execute(db)
  await sql`
    insert into group_member_days_settled (settled_until)
    select coalesce(least(min(${sql.raw(DAY_OF('start_time'))}), ${sql.raw(BOUNDARY)}), ${sql.raw(BOUNDARY)}) from trace_summaries`.execute(db)
  await sql`select tracewell_settle_group_member_days()`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.id(`trace_summaries_group_members_${event}`)} on trace_summaries`.execute(db)
  await sql`drop function tracewell_settle_group_member_days()`.execute(db)
  await sql`drop function tracewell_rebuild_group_member_days()`.execute(db)
  await sql`drop function tracewell_group_member_days_changed()`.execute(db)
  await sql`drop function tracewell_unbuild_group_member_day(text, timestamptz)`.execute(db)
  await sql`drop function tracewell_build_group_member_days(text, timestamptz, timestamptz)`.execute(db)
  await sql`drop table group_member_days_settled`.execute(db)
  await sql`drop table group_member_day_marks`.execute(db)
  await sql`drop table group_member_days`.execute(db)
}
