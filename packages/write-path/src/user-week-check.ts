import { sql, type Executor } from '@tracewell/db'

/**
 * The users' rows of the week (user_week_figures, migration 2026-12-06T1610) that differ from the
 * sums of their rows of the day ('user.day', themselves checked against the hourly rows by
 * summaryMismatches): every figure (a token or cost sum of none unknown or 0 alike) and the
 * durations' histogram bucket by bucket.
 */
export async function userWeekMismatches(db: Executor, projectId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with days as (
      select date_bin('7 days', hour, timestamptz '2000-01-03 00:00:00+00') as week, value as user_id, traces, error_traces, spans, errors,
        input_tokens, output_tokens, cost_usd, durations
      from usage_rollups where project_id = ${projectId} and dimension = 'user.day'
    ),
    weeks as (select * from user_week_figures where project_id = ${projectId}),
    figures as (
      select count(*)::integer as n from (
        select week, user_id, sum(traces) as traces, sum(error_traces) as error_traces, sum(spans) as spans, sum(errors) as errors,
          coalesce(sum(input_tokens), 0) as input_tokens, coalesce(sum(output_tokens), 0) as output_tokens, coalesce(sum(cost_usd), 0) as cost_usd
        from days group by 1, 2 having (sum(traces), sum(spans)) <> (0, 0)
      ) d full join weeks w using (week, user_id)
      where d.user_id is null or w.user_id is null
        or (d.traces, d.error_traces, d.spans, d.errors, d.input_tokens, d.output_tokens, d.cost_usd)
          is distinct from (w.traces, w.error_traces, w.spans, w.errors, w.input_tokens, w.output_tokens, w.cost_usd)
    ),
    durations as (
      select count(*)::integer as n from (
        select week, user_id, array_lower(durations, 1) + x.o::integer - 1 as bucket, sum(x.n) as n
        from days, unnest(durations) with ordinality as x(n, o) group by 1, 2, 3 having sum(x.n) <> 0
      ) d full join (
        select week, user_id, array_lower(durations, 1) + x.o::integer - 1 as bucket, x.n from weeks, unnest(durations) with ordinality as x(n, o) where x.n <> 0
      ) w using (week, user_id, bucket)
      where d.n is distinct from w.n
    )
    select (select n from figures) + (select n from durations) as n`.execute(db)
  return rows[0]?.n ?? -1
}
