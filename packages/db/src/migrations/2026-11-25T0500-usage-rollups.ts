import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Hourly usage, kept by the writer in the transaction that stores the spans (usage-rollups.ts):
// what /api/usage reads instead of scanning every span of its window.
//
// One row per project, UTC hour, dimension and value: the dimension is 'all' (the project's
// totals, value ''), 'model', 'vendor', 'service' or 'user' (value '' for spans without one). Not
// one row per (model, vendor, service, user): with a user in the key the rows are nearly as many
// as the traces (bench:query's 1,000 users spread over every hour), which is what was too slow.
// A span adds to five rows.
//
// `traces` counts the distinct traces with a span in the row's hour and value; `latency` counts
// the LLM calls (spans with a model) in 128 log-scale buckets of their duration, bucket i holding
// [2^(i/4), 2^((i+1)/4)) µs (bucket 0 also below 1 µs, bucket 127 everything from 2^31.75 µs, 58 min).
//
// Then the rollups of spans stored before are computed from them, one UTC day at a time. Stop the
// writers while it runs, as for trace summaries.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table usage_rollups (
      project_id text not null,
      dimension text not null,
      hour timestamptz not null,
      value text not null,
      traces integer not null,
      spans integer not null,
      errors integer not null,
      input_tokens bigint not null,
      output_tokens bigint not null,
      cost_usd numeric,
      latency integer[] not null,
      primary key (project_id, dimension, hour, value)
    )`.execute(db)
  await backfillUsageRollups(db)
}

/** Rolls up every stored span, a UTC day of spans per statement (also what bench:query loads rollups with). */
export async function backfillUsageRollups(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(start_time)) as first, max(start_time) as last from spans`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  if (!first || !last) return
  for (let day = new Date(first); day <= last; day = new Date(day.getTime() + 86_400_000)) {
    await backfillWindow(db, day, new Date(day.getTime() + 86_400_000))
  }
}

async function backfillWindow(db: AnyDb, from: Date, to: Date): Promise<void> {
  await sql`
    with s as (
      select project_id, date_trunc('hour', start_time) as hour, d.dimension, d.value, trace_id, status_code,
        -- A span that sums the calls beneath it ('invoke_agent') counts neither tokens, cost nor latency.
        case when llm_request_type = 'invoke_agent' then null else input_tokens end as input_tokens,
        case when llm_request_type = 'invoke_agent' then null else output_tokens end as output_tokens,
        case when llm_request_type = 'invoke_agent' then null else total_cost_usd end as total_cost_usd,
        case when llm_model is null or llm_request_type = 'invoke_agent' then null
          when duration_ns < 1000 then 0
          else least(127, floor(4 * ln(duration_ns / 1000.0) / ln(2)))::int end as bucket
      from spans cross join lateral (values ('all', ''), ('model', coalesce(llm_model, '')), ('vendor', coalesce(llm_vendor, '')),
        ('service', coalesce(service_name, '')), ('user', coalesce(user_id, ''))) as d(dimension, value)
      where start_time >= ${from} and start_time < ${to}
    ),
    figures as (
      select project_id, dimension, hour, value, count(distinct trace_id) as traces, count(*) as spans,
        count(*) filter (where status_code = 2) as errors, coalesce(sum(input_tokens), 0) as input_tokens,
        coalesce(sum(output_tokens), 0) as output_tokens, sum(total_cost_usd) as cost_usd
      from s group by 1, 2, 3, 4
    ),
    counts as (
      select project_id, dimension, hour, value, bucket, count(*) as n from s where bucket is not null group by 1, 2, 3, 4, 5
    )
    insert into usage_rollups (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
    select f.project_id, f.dimension, f.hour, f.value, f.traces, f.spans, f.errors, f.input_tokens, f.output_tokens, f.cost_usd,
      coalesce(h.latency, array_fill(0, array[128]))
    from figures f left join (
      select k.project_id, k.dimension, k.hour, k.value, array_agg(coalesce(c.n, 0)::int order by i) as latency
      from (select distinct project_id, dimension, hour, value from counts) k
      cross join generate_series(0, 127) as i
      left join counts c on c.project_id = k.project_id and c.dimension = k.dimension and c.hour = k.hour and c.value = k.value and c.bucket = i
      group by 1, 2, 3, 4
    ) h using (project_id, dimension, hour, value)
    on conflict (project_id, dimension, hour, value) do nothing`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_rollups').ifExists().execute()
}
