import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// Users by session (issue 45 §3) keeps the 50 sessions with the most users and reads only their
// traces; the traces without a session are a group too (null), often the one with the most users,
// and counting theirs read the month's summaries again. group_member_days (migration
// 2026-12-07T0100) gains the dimension 'session' with that one value: a row a settled day holding
// the hours of the users (and of no session) of the traces without a session, built with the
// other dimensions' rows. Not a row per session: 241,000 a month, no faster than the summaries.

const DAY_OF = (time: string) => `date_bin('1 day', ${time}, timestamptz '2000-01-01 00:00:00+00')`

/**
 * The rows of the traces of `where` (on t, a trace_summaries row): a day, dimension and value's
 * hours, and its users' and sessions' masks of hours with how many had each.
 */
const rowsOf = (where: string) => `
  select project_id, day, dimension, value, bit_or(hours) as hours,
    coalesce(array_agg(hours order by hours) filter (where kind = 'user' and counted), '{}') as user_masks,
    coalesce(array_agg(n order by hours) filter (where kind = 'user' and counted), '{}') as user_counts,
    coalesce(array_agg(hours order by hours) filter (where kind = 'session' and counted), '{}') as session_masks,
    coalesce(array_agg(n order by hours) filter (where kind = 'session' and counted), '{}') as session_counts
  from (
    select project_id, day, dimension, value, kind, member is not null as counted, hours, count(*)::integer as n
    from (
      select r.project_id, r.day, r.dimension, r.value, k.kind, k.member, bit_or(r.bit) as hours
      from (
        select t.project_id, ${DAY_OF('t.start_time')} as day, 1 << extract(hour from t.start_time at time zone 'UTC')::int as bit,
          t.user_id, t.session_id, d.dimension, g.value
        from trace_summaries t
        cross join lateral (values ('model', t.models), ('vendor', t.vendors), ('service', t.services), ('prompt', t.prompts), ('tag', t.tags),
          ('user', array[t.user_id]), ('session', array[t.session_id])) as d(dimension, arr)
        cross join lateral unnest(case when coalesce(cardinality(d.arr), 0) = 0 then array[null::text] else d.arr end) as g(value)
        where ${where} and t.service_name is distinct from 'tracewell' and (d.dimension <> 'session' or t.session_id is null)
      ) r
      cross join lateral (values ('user', r.user_id), ('session', r.session_id)) as k(kind, member)
      group by 1, 2, 3, 4, 5, 6
    ) m
    group by 1, 2, 3, 4, 5, 6, 7
  ) h
  group by project_id, day, dimension, value`

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function tracewell_build_group_member_days(project text, from_day timestamptz, until_day timestamptz) returns void language plpgsql as $$
    begin
      delete from group_member_days where project_id = project and dimension in ('model', 'vendor', 'service', 'prompt', 'tag', 'user', 'session')
        and day >= from_day and day < until_day;
      insert into group_member_days (project_id, day, dimension, value, hours, user_masks, user_counts, session_masks, session_counts)
      select * from (${sql.raw(rowsOf('t.project_id = project and t.start_time >= from_day and t.start_time < until_day'))}) b;
      insert into group_member_day_marks (project_id, day, built)
      select project, d, true from generate_series(from_day, until_day - interval '1 day', interval '1 day') as g(d)
      on conflict (project_id, day) do update set built = true;
    end $$`.execute(db)
  // The built days' rows of the traces without a session, the summaries' writers kept out meanwhile
  // (a fold would clear a day's mark after this read it). The other dimensions' rows are as built.
  await sql`lock table trace_summaries in share row exclusive mode`.execute(db)
  await sql`
    insert into group_member_days (project_id, day, dimension, value, hours, user_masks, user_counts, session_masks, session_counts)
    select b.* from (${sql.raw(rowsOf(`t.session_id is null and exists (
      select 1 from group_member_day_marks m where m.project_id = t.project_id and m.built and m.day = ${DAY_OF('t.start_time')})`))}) b
    where b.dimension = 'session'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from group_member_days where dimension = 'session'`.execute(db)
  await sql`
    create or replace function tracewell_build_group_member_days(project text, from_day timestamptz, until_day timestamptz) returns void language plpgsql as $$
    begin
      delete from group_member_days where project_id = project and dimension in ('model', 'vendor', 'service', 'prompt', 'tag', 'user')
        and day >= from_day and day < until_day;
      insert into group_member_days (project_id, day, dimension, value, hours, user_masks, user_counts, session_masks, session_counts)
      select b.project_id, b.day, b.dimension, b.value, b.hours, b.user_masks, b.user_counts, b.session_masks, b.session_counts
      from (${sql.raw(rowsOf('t.project_id = project and t.start_time >= from_day and t.start_time < until_day'))}) b where b.dimension <> 'session';
      insert into group_member_day_marks (project_id, day, built)
      select project, d, true from generate_series(from_day, until_day - interval '1 day', interval '1 day') as g(d)
      on conflict (project_id, day) do update set built = true;
    end $$`.execute(db)
}
