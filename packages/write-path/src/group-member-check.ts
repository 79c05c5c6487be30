import { sql, type Executor } from '@tracewell/db'

/**
 * The rows of group_member_days (migrations 2026-12-07T0100 and T0400: by session, of the traces
 * without one only) of the project's built days that differ from their recomputation from the
 * summaries: a row missing or extra, its hours, or its users' or sessions' masks and counts (in
 * the masks' order, as the build keeps them).
 */
export async function groupMemberMismatches(db: Executor, projectId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with built as (select day from group_member_day_marks where project_id = ${projectId} and built),
    traced as (
      select date_bin('1 day', t.start_time, timestamptz '2000-01-01 00:00:00+00') as day, 1 << extract(hour from t.start_time at time zone 'UTC')::int as bit,
        t.user_id, t.session_id, d.dimension, g.value
      from trace_summaries t
      cross join lateral (values ('model', t.models), ('vendor', t.vendors), ('service', t.services), ('prompt', t.prompts), ('tag', t.tags),
        ('user', array[t.user_id]), ('session', array[t.session_id])) as d(dimension, arr)
      cross join lateral unnest(case when coalesce(cardinality(d.arr), 0) = 0 then array[null::text] else d.arr end) as g(value)
      where t.project_id = ${projectId} and t.service_name is distinct from 'tracewell' and (d.dimension <> 'session' or t.session_id is null)
        and date_bin('1 day', t.start_time, timestamptz '2000-01-01 00:00:00+00') in (select day from built)
    ),
    members as (
      select day, dimension, value, k.kind, k.member is not null as counted, bit_or(bit) as hours
      from traced cross join lateral (values ('user', user_id), ('session', session_id)) as k(kind, member)
      group by day, dimension, value, k.kind, k.member
    ),
    masks as (select day, dimension, value, kind, counted, hours, count(*)::integer as n from members group by 1, 2, 3, 4, 5, 6),
    expected as (
      select day, dimension, coalesce(value, '') as key, value is null as none, bit_or(hours) as hours,
        coalesce(array_agg(hours order by hours) filter (where kind = 'user' and counted), '{}') as user_masks,
        coalesce(array_agg(n order by hours) filter (where kind = 'user' and counted), '{}') as user_counts,
        coalesce(array_agg(hours order by hours) filter (where kind = 'session' and counted), '{}') as session_masks,
        coalesce(array_agg(n order by hours) filter (where kind = 'session' and counted), '{}') as session_counts
      from masks group by day, dimension, value
    ),
    stored as (
      select day, dimension, coalesce(value, '') as key, value is null as none, hours, user_masks, user_counts, session_masks, session_counts
      from group_member_days where project_id = ${projectId} and day in (select day from built)
    )
    select count(*)::integer as n from expected e full join stored s using (day, dimension, key, none)
    where (e.hours, e.user_masks, e.user_counts, e.session_masks, e.session_counts) is distinct from (s.hours, s.user_masks, s.user_counts, s.session_masks, s.session_counts)`.execute(db)
  return rows[0]?.n ?? -1
}
