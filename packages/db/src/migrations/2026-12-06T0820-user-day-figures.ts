import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// Dashboards grouped by user over 30 days (issue 45 §3) rank the users by their figures over the
// window, read from a row per user and hour (docs/benchmarks.md counts them).
// A user's row of the day ('user.day', migration 2026-12-06T0710) now holds what its hourly rows
// of the day hold (traces, error_traces, durations, and the sums of its spans: spans, errors,
// tokens, cost), but the calls' latency ('{}'), so that whole days are ranked from a row a user
// and day. The summariser's fold adds to it as it adds to the hourly row.
//
// The rows of stored traces are summed from the hourly rows, a UTC day at a time (a day of them
// may exist where the user's spans ran past midnight but no trace of theirs started); run it with
// the writers stopped, as the other rollup migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await backfillUserDayFigures(db)
}

/** Every figure of the users' rows of the day, from their hourly rows (also what bench:dashboards loads them with). */
export async function backfillUserDayFigures(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(hour), 'UTC') as first, max(hour) as last from usage_rollups where dimension = 'user'`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  for (let day = first ? new Date(first) : null; day !== null && last && day <= last; day = new Date(day.getTime() + 86_400_000)) {
    await sql`
      with h as (
        select * from usage_rollups where dimension = 'user' and hour >= ${day} and hour < ${new Date(day.getTime() + 86_400_000)}
      ),
      counts as (
        select h.project_id, h.value, array_lower(h.durations, 1) + d.o::int - 1 as bucket, sum(d.n)::int as n
        from h, unnest(h.durations) with ordinality as d(n, o) group by 1, 2, 3 having sum(d.n) <> 0
      ),
      -- Each user's buckets from the lowest to the highest not 0, subscripted by bucket (the rows' one form).
      histograms as (
        select k.project_id, k.value, ('[' || k.lo || ':' || k.hi || ']=' || array_agg(coalesce(c.n, 0) order by i)::text)::integer[] as durations
        from (select project_id, value, min(bucket) as lo, max(bucket) as hi from counts group by 1, 2) k
        cross join lateral generate_series(k.lo, k.hi) as i
        left join counts c on c.project_id = k.project_id and c.value = k.value and c.bucket = i
        group by k.project_id, k.value, k.lo, k.hi
      ),
      figures as (
        select project_id, value, sum(traces)::int as traces, sum(error_traces)::int as error_traces, sum(spans)::int as spans, sum(errors)::int as errors,
          sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_usd) as cost_usd
        from h group by 1, 2
        having sum(traces) <> 0 or sum(spans) <> 0
      )
      insert into usage_rollups as u (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency, error_traces, durations)
      select f.project_id, 'user.day', ${day}::timestamptz, f.value, f.traces, f.spans, f.errors, f.input_tokens, f.output_tokens, f.cost_usd, '{}',
        f.error_traces, coalesce(hs.durations, '{}')
      from figures f left join histograms hs using (project_id, value)
      order by 1, 4
      on conflict (project_id, dimension, hour, value) do update set traces = excluded.traces, spans = excluded.spans, errors = excluded.errors,
        input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd,
        error_traces = excluded.error_traces, durations = excluded.durations`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    update usage_rollups set spans = 0, errors = 0, input_tokens = null, output_tokens = null, cost_usd = null, error_traces = 0, durations = '{}'
    where dimension = 'user.day'`.execute(db)
  await sql`delete from usage_rollups where dimension = 'user.day' and traces = 0`.execute(db)
}
