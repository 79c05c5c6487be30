import { sql, wordsOfStoredTraces, type Executor } from '@tracewell/db'
import { BlockFilter, textBlockOf } from '@tracewell/text-filter'
import { userWeekMismatches } from './user-week-check.ts'
import { scoreDimensionMismatches } from './score-dimension-check.ts'
import { groupMemberMismatches } from './group-member-check.ts'

// The summaries recomputed from scratch, from `spans`, and compared with what the summariser
// wrote (token sums are null where no span reported a count, as the summariser leaves them): the proof that every stored span counts exactly once in every aggregate, whatever was
// killed and redelivered on the way (the fault tests run it after their storms). Counts, times,
// tokens and costs are compared exactly (costs as numeric, to the last digit); the model, vendor
// and service sets as sets. Not compared: a trace's name, session and user where its spans
// disagree (the first batch to name them wins, by design), and the traces' own word filters
// (covered by the search tests), and the prompts and tags read from spans' attributes (kept as
// read). Every word of a trace's spans must be in the word filter of its
// block (trace_text_blocks), or search would not find it.

/** Rows that differ from the recomputation, per table (0 everywhere: the summaries are exact). */
export interface SummaryMismatches {
  traces: number
  sessions: number
  rollups: number
  /** Traces a word of whose spans the filter of their block lacks. */
  blocks: number
}

// A span that sums the calls beneath it adds neither tokens, cost nor latency (AGGREGATE_OPERATION).
const COUNTED = sql`llm_request_type is distinct from 'invoke_agent'`

// A span's total tokens: as reported, else its input and output added, else unknown (spanTotalTokens).
const SPAN_TOTAL = sql`coalesce(total_tokens, case when input_tokens is null and output_tokens is null then null else coalesce(input_tokens, 0) + coalesce(output_tokens, 0) end)`

export async function summaryMismatches(db: Executor, projectId: string): Promise<SummaryMismatches> {
  const { rows: traces } = await sql<{ n: number }>`
    with r as (
      select trace_id, count(*)::integer as span_count, (count(*) filter (where status_code = 2))::integer as error_count,
        min(start_time) as start_time, max(end_time) as end_time, bool_or(parent_span_id is null) as has_root,
        coalesce(array_agg(distinct llm_model) filter (where llm_model is not null), '{}') as models,
        coalesce(array_agg(distinct llm_vendor) filter (where llm_vendor is not null), '{}') as vendors,
        coalesce(array_agg(distinct service_name) filter (where service_name is not null), '{}') as services,
        sum(input_tokens) filter (where ${COUNTED}) as input_tokens,
        sum(output_tokens) filter (where ${COUNTED}) as output_tokens,
        sum(${SPAN_TOTAL}) filter (where ${COUNTED}) as total_tokens,
        sum(total_cost_usd) filter (where ${COUNTED}) as cost_usd, bool_or(tokens_estimated) as tokens_estimated,
        count(distinct session_id) as sessions, min(session_id) as session_id
      from spans where project_id = ${projectId} group by trace_id
    ),
    s as (select * from trace_summaries where project_id = ${projectId})
    select count(*)::integer as n from r full join s using (trace_id)
    where r.trace_id is null or s.trace_id is null
      or (r.span_count, r.error_count, r.start_time, r.end_time, r.has_root, r.input_tokens, r.output_tokens, r.total_tokens, r.cost_usd, r.tokens_estimated)
        is distinct from (s.span_count, s.error_count, s.start_time, s.end_time, s.has_root, s.input_tokens, s.output_tokens, s.total_tokens, s.cost_usd, s.tokens_estimated)
      or not (r.models @> s.models and s.models @> r.models and r.vendors @> s.vendors and s.vendors @> r.vendors
        and r.services @> s.services and s.services @> r.services)
      or (r.sessions <= 1 and r.session_id is distinct from s.session_id)
      or s.duration_us is distinct from (extract(epoch from r.end_time - r.start_time) * 1000000)::bigint`.execute(db)

  const { rows: sessions } = await sql<{ n: number }>`
    with r as (
      select session_id, count(*)::integer as trace_count, min(start_time) as first_seen, max(end_time) as last_seen,
        sum(total_tokens) as total_tokens, sum(cost_usd) as cost_usd
      from trace_summaries where project_id = ${projectId} and session_id is not null group by session_id
    ),
    s as (select * from session_summaries where project_id = ${projectId})
    select count(*)::integer as n from r full join s using (session_id)
    where r.session_id is null or s.session_id is null
      or (r.trace_count, r.first_seen, r.last_seen, r.total_tokens, r.cost_usd) is distinct from (s.trace_count, s.first_seen, s.last_seen, s.total_tokens, s.cost_usd)`.execute(db)

  const { rows: rollups } = await sql<{ n: number }>`
    with by_span as (
      select date_trunc('hour', start_time, 'UTC') as hour, d.dimension, d.value, status_code,
        case when ${COUNTED} then input_tokens end as input_tokens,
        case when ${COUNTED} then output_tokens end as output_tokens,
        case when ${COUNTED} then total_cost_usd end as cost_usd,
        case when llm_model is null or not (${COUNTED}) then null
          when duration_ns < 1000 then 0
          else least(127, floor(4 * ln(duration_ns / 1000.0) / ln(2)))::integer end as bucket
      from spans cross join lateral (values ('all', ''), ('model', coalesce(llm_model, '')), ('vendor', coalesce(llm_vendor, '')),
        ('service', coalesce(service_name, '')), ('user', coalesce(user_id, '')),
        ('tracewell.model', case when service_name = 'tracewell' then coalesce(llm_model, '') end),
        ('tracewell.vendor', case when service_name = 'tracewell' then coalesce(llm_vendor, '') end)) as d(dimension, value)
      where project_id = ${projectId} and d.value is not null
    ),
    span_figures as (
      select dimension, hour, value, count(*)::integer as spans, (count(*) filter (where status_code = 2))::integer as errors,
        sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_usd) as cost_usd
      from by_span group by 1, 2, 3
    ),
    calls as (
      select dimension, hour, value, bucket, count(*)::integer as calls from by_span where bucket is not null group by 1, 2, 3, 4
    ),
    -- Each row's 128 buckets as an array, built once (a lookup per row and bucket was quadratic).
    latency as (
      select k.dimension, k.hour, k.value, array_agg(coalesce(c.calls, 0) order by i) as latency
      from (select distinct dimension, hour, value from calls) k
      cross join generate_series(0, 127) as i
      left join calls c on c.dimension = k.dimension and c.hour = k.hour and c.value = k.value and c.bucket = i
      group by 1, 2, 3
    ),
    trace_figures as (
      select k.dimension, date_trunc('hour', t.start_time, 'UTC') as hour, k.value, count(*)::integer as traces
      from trace_summaries t cross join lateral tracewell_trace_rollup_keys(t.models, t.vendors, t.services, t.user_id) as k
      where t.project_id = ${projectId} group by 1, 2, 3
    ),
    r as (
      select dimension, hour, value, coalesce(t.traces, 0) as traces, coalesce(f.spans, 0) as spans, coalesce(f.errors, 0) as errors,
        f.input_tokens, f.output_tokens, f.cost_usd
      from span_figures f full join trace_figures t using (dimension, hour, value)
    ),
    s as (select * from usage_rollups where project_id = ${projectId} and dimension not in ('session', 'prompt', 'tag', 'shape', 'user.day', 'session.day'))
    select count(*)::integer as n from r full join s using (dimension, hour, value) left join latency l using (dimension, hour, value)
    where (r.dimension is null and (s.traces, s.spans) <> (0, 0)) or s.dimension is null
      or (r.traces, r.spans, r.errors, r.input_tokens, r.output_tokens, r.cost_usd) is distinct from (s.traces, s.spans, s.errors, s.input_tokens, s.output_tokens, s.cost_usd)
      or s.latency is distinct from coalesce(l.latency, array_fill(0, array[128]))`.execute(db)

  return {
    traces: traces[0]?.n ?? -1,
    sessions: sessions[0]?.n ?? -1,
    rollups: (rollups[0]?.n ?? -1) + (await traceRollupMismatches(db, projectId)) + (await userWeekMismatches(db, projectId))
      + (await scoreDimensionMismatches(db, projectId)) + (await groupMemberMismatches(db, projectId)),
    blocks: await textBlockMisses(db, projectId),
  }
}

/**
 * The rollups' figures of traces recomputed from the summaries: in every row, its traces with an
 * error and their durations' histogram (compared bucket by bucket: a fold may leave a bucket at
 * 0); in the rows of the whole trace (session, prompt, tag, shape), the traces' own figures too, a token
 * or cost sum of no remaining trace being 0 or unknown alike; in the rows of the day, the traces,
 * and in a user's, every figure its hourly rows of the day hold, and their traces hour by hour.
 */
async function traceRollupMismatches(db: Executor, projectId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with t as (
      select t.*, date_trunc('hour', t.start_time, 'UTC') as hour,
        case when t.duration_us < 1 then 0 else least(127, floor(4 * ln(t.duration_us) / ln(2)))::int end as bucket
      from trace_summaries t where t.project_id = ${projectId}
    ),
    keyed as (
      select t.*, k.dimension, k.value from t cross join lateral tracewell_trace_rollup_keys(t.models, t.vendors, t.services, t.user_id) as k
      union all
      select t.*, k.dimension, k.value from t cross join lateral tracewell_trace_whole_keys(t.session_id, t.prompts, t.tags) as k
      where not ('tracewell' = any(t.services))
      union all
      select * from (select t.*, 'shape', tracewell_trace_shape(t.models, t.response_models, t.vendors, t.services) as value from t
        where t.service_name is distinct from 'tracewell') as shaped where value is not null
    ),
    r as (
      select dimension, hour, value, count(*)::integer as traces, (count(*) filter (where error_count > 0))::integer as error_traces,
        sum(span_count)::integer as spans, sum(error_count)::integer as errors, coalesce(sum(input_tokens), 0) as input_tokens,
        coalesce(sum(output_tokens), 0) as output_tokens, coalesce(sum(cost_usd), 0) as cost_usd
      from keyed group by 1, 2, 3
    ),
    s as (select * from usage_rollups where project_id = ${projectId} and dimension not in ('user.day', 'session.day')),
    -- Who was active on each day: the traces that started on it under their user, and (but Tracewell's own) under their session.
    days as (
      select count(*)::integer as n from (
        select k.dimension, date_trunc('day', t.start_time, 'UTC') as hour, k.value, count(*)::integer as traces
        from t cross join lateral (values ('user.day', coalesce(t.user_id, '')),
          ('session.day', case when 'tracewell' = any(t.services) then null else coalesce(t.session_id, '') end)) as k(dimension, value)
        where k.value is not null group by 1, 2, 3
      ) r full join (select * from usage_rollups where project_id = ${projectId} and dimension in ('user.day', 'session.day')) d using (dimension, hour, value)
      where d.dimension is null or (r.dimension is null and d.traces <> 0) or r.traces <> d.traces
    ),
    figures as (
      select count(*)::integer as n from r full join s using (dimension, hour, value)
      where s.dimension is null
        -- A row a trace moved out of may stay, empty.
        or (r.dimension is null and ((s.traces, s.error_traces) <> (0, 0) or (s.dimension in ('session', 'prompt', 'tag', 'shape') and s.spans <> 0)))
        or (r.dimension is not null and (r.traces <> s.traces or r.error_traces <> s.error_traces
          or (s.dimension in ('session', 'prompt', 'tag', 'shape') and (r.spans, r.errors, r.input_tokens, r.output_tokens, r.cost_usd)
            is distinct from (s.spans, s.errors, coalesce(s.input_tokens, 0), coalesce(s.output_tokens, 0), coalesce(s.cost_usd, 0)))))
    ),
    counted as (select dimension, hour, value, bucket, count(*)::integer as n from keyed group by 1, 2, 3, 4),
    stored as (
      select dimension, hour, value, array_lower(durations, 1) + d.o::integer - 1 as bucket, d.n
      from s, unnest(s.durations) with ordinality as d(n, o) where d.n <> 0
    ),
    durations as (
      select count(*)::integer as n from counted full join stored using (dimension, hour, value, bucket)
      where counted.n is distinct from stored.n
    ),
    -- A user's row of the day holds what its hourly rows of the day hold (those checked above).
    user_days as (select * from usage_rollups where project_id = ${projectId} and dimension = 'user.day'),
    user_day_figures as (
      select count(*)::integer as n from (
        select date_trunc('day', hour, 'UTC') as hour, value, sum(traces) as traces, sum(error_traces) as error_traces, sum(spans) as spans,
          sum(errors) as errors, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_usd) as cost_usd
        from s where dimension = 'user' group by 1, 2
      ) h full join user_days d using (hour, value)
      where (d.value is null and (h.traces, h.spans) <> (0, 0)) or (h.value is null and (d.traces, d.spans) <> (0, 0))
        or (h.value is not null and d.value is not null and (h.error_traces, h.spans, h.errors, h.input_tokens, h.output_tokens, h.cost_usd)
          is distinct from (d.error_traces, d.spans, d.errors, d.input_tokens, d.output_tokens, d.cost_usd))
    ),
    user_day_durations as (
      select count(*)::integer as n from (
        select date_trunc('day', hour, 'UTC') as hour, value, bucket, sum(n) as n from stored where dimension = 'user' group by 1, 2, 3 having sum(n) <> 0
      ) h full join (
        select hour, value, array_lower(durations, 1) + d.o::integer - 1 as bucket, d.n from user_days, unnest(durations) with ordinality as d(n, o) where d.n <> 0
      ) d using (hour, value, bucket)
      where h.n is distinct from d.n
    ),
    -- And the traces of each of its hourly rows of the day, by hour (24 zeros or none alike).
    user_day_hours as (
      select count(*)::integer as n from (
        select date_trunc('day', hour, 'UTC') as hour, value, date_part('hour', hour at time zone 'UTC')::integer + 1 as i, traces as n
        from s where dimension = 'user' and traces <> 0
      ) h full join (
        select hour, value, d.i::integer, d.n from user_days, unnest(hours) with ordinality as d(n, i) where d.n <> 0
      ) d using (hour, value, i)
      where h.n is distinct from d.n
    ),
    -- A session's row (session_figures) holds the sums of its hourly rows of the settled hours (those checked above), and hours that bound them.
    session_rows as (
      select count(*)::integer as n from (
        select value as session_id, min(hour) as first_hour, max(hour) as last_hour, sum(traces) as traces, sum(error_traces) as error_traces,
          sum(spans) as spans, sum(errors) as errors, coalesce(sum(input_tokens), 0) as input_tokens, coalesce(sum(output_tokens), 0) as output_tokens,
          coalesce(sum(cost_usd), 0) as cost_usd
        from s where dimension = 'session' and value <> '' and hour < (select settled_until from session_figures_settled) group by 1 having (sum(traces), sum(spans)) <> (0, 0)
      ) h full join (select * from session_figures where project_id = ${projectId}) f using (session_id)
      where h.session_id is null or f.session_id is null or f.first_hour > h.first_hour or f.last_hour < h.last_hour
        or (h.traces, h.error_traces, h.spans, h.errors, h.input_tokens, h.output_tokens, h.cost_usd)
          is distinct from (f.traces, f.error_traces, f.spans, f.errors, f.input_tokens, f.output_tokens, f.cost_usd)
    ),
    -- A session with rows on both sides of the boundary is marked open from the first after it, or before.
    session_open as (
      select count(*)::integer as n from (
        select value, min(hour) as first_open from s
        where dimension = 'session' and value <> '' and hour >= (select settled_until from session_figures_settled) group by 1
      ) o join session_figures f on f.project_id = ${projectId} and f.session_id = o.value
      where f.open_from is null or f.open_from > o.first_open
    ),
    session_durations as (
      select count(*)::integer as n from (
        select value as session_id, bucket, sum(n) as n from stored
        where dimension = 'session' and value <> '' and hour < (select settled_until from session_figures_settled) group by 1, 2 having sum(n) <> 0
      ) h full join (
        select session_id, array_lower(durations, 1) + d.o::integer - 1 as bucket, d.n
        from session_figures, unnest(durations) with ordinality as d(n, o) where project_id = ${projectId} and d.n <> 0
      ) f using (session_id, bucket)
      where h.n is distinct from f.n
    )
    select (select n from figures) + (select n from durations) + (select n from days) + (select n from user_day_figures) + (select n from user_day_durations)
      + (select n from user_day_hours)
      + (select n from session_rows) + (select n from session_open) + (select n from session_durations) as n`.execute(db)
  return rows[0]?.n ?? -1
}

/** The project's traces whose block's word filter lacks a word of their spans. */
async function textBlockMisses(db: Executor, projectId: string): Promise<number> {
  const { rows: blockRows } = await sql<{ block: Date; words: number; filter: string }>`
    select block, words, filter::text as filter from trace_text_blocks where project_id = ${projectId}`.execute(db)
  const blocks = new Map(blockRows.map((row) => [row.block.getTime(), BlockFilter.fromBitText(row.filter, row.words)]))
  const { rows: traces } = await sql<{ project_id: string; trace_id: string; start_time: string; end_time: string }>`
    select project_id, trace_id, to_char(start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as start_time,
      to_char(end_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as end_time
    from trace_summaries where project_id = ${projectId}`.execute(db)
  let misses = 0
  for (let at = 0; at < traces.length; at += 1_000) {
    const batch = traces.slice(at, at + 1_000)
    const words = await wordsOfStoredTraces(db, batch)
    for (const trace of batch) {
      const block = blocks.get(textBlockOf(Date.parse(trace.start_time)))
      const hashes = [...(words.get(`${trace.project_id}\u0000${trace.trace_id}`)?.hashes() ?? [])]
      if (hashes.length > 0 && (block === undefined || !hashes.every((hash) => block.has(hash)))) misses++
    }
  }
  return misses
}
