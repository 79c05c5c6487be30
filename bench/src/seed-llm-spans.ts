// Seeding for the benchmarks that need millions of stored spans (bench:query, bench:cleanup:days):
// the spans generated in SQL (insert … select from generate_series, as fast as COPY), a partition
// a day, then what the writer keeps beside them (trace and session summaries, usage rollups, and
// for search the traces' word filters) built from the stored spans with set-based statements, a
// UTC day at a time.
//
// The summaries hold what the writer's summariser would have folded: the same aggregates as the
// recomputation of @tracewell/write-path's summary-check (which the seed's test compares them
// with), the word filters by the writer's own tokenizer. Not the migrations' backfills: those are
// frozen as the schema was when each ran (token sums of 0 where the writer leaves them unknown, a
// rollup's traces counted in every hour they have a span in), and at 10 million spans they took
// 1,865 s, nearly all of it updating each trace's summary row a second time for its word filter
// (docs/benchmarks.md, "Seeding").
//
// Built a day at a time: a trace belongs to the day of its first span, and its spans are read from
// that day and an hour either side (a generated trace lasts seconds); buildSummaries checks
// that every span was counted, so a trace longer than that fails the seed instead of being cut.
import { performance } from 'node:perf_hooks'
import { addWordsToTextBlocks, backfillActiveDays, backfillTraceRollups, backfillTraceShapes, backfillUserDayFigures, backfillUserDayHours, createDayPartition, DAY_PARTITIONED_TABLES, isoDay, sql, startOfUtcDay, wordsByBlock, type Db, type TextBlockWords } from '@tracewell/db'
import { TextFilterWords } from '@tracewell/text-filter'
import type { RawBuilder } from 'kysely'

export const dayMs = 86_400_000

/** How far past its day a trace's spans are looked for. */
const TRACE_SPILL_MS = 3_600_000

/** Spans per insert statement: ~250 MB of rows, a few seconds each. */
const SPANS_PER_STATEMENT = 200_000

/** Statements run at once: the machine's two cores, one Postgres backend on each. */
const CONNECTIONS = 2

/** A partition of every day-partitioned table (spans and the summaries) for every UTC day from `from` to `to` (both included). */
export async function createDayPartitions(db: Db, from: Date, to: Date): Promise<void> {
  for (let day = startOfUtcDay(from).getTime(); day <= to.getTime(); day += dayMs) {
    for (const table of DAY_PARTITIONED_TABLES) await db.transaction().execute((trx) => createDayPartition(trx, table, new Date(day)))
  }
}

/**
 * Inserts span rows `0` to `total - 1`: `rowsOf(low, high)` is the statement that inserts rows
 * `low` to `high`, run SPANS_PER_STATEMENT at a time over CONNECTIONS connections.
 */
export async function insertGeneratedSpans(db: Db, total: number, rowsOf: (low: number, high: number) => RawBuilder<unknown>): Promise<void> {
  const ranges: Array<[number, number]> = []
  for (let low = 0; low < total; low += SPANS_PER_STATEMENT) ranges.push([low, Math.min(low + SPANS_PER_STATEMENT, total) - 1])
  await inParallel(ranges, ([low, high]) => rowsOf(low, high).execute(db))
}

/**
 * bench:query's spans: `total` over the 30 days after `from`, 3 projects, 8 spans a trace (an
 * agent span, then LLM calls of 4 models and 3 vendors with tokens, cost, a prompt and a
 * completion, ~1.3 KB a row), 5 traces a session, 1,000 users, 1 trace in 50 failing.
 */
export function querySpans(projects: readonly string[], from: Date, total: number): (low: number, high: number) => RawBuilder<unknown> {
  const spansPerTrace = 8
  const stepMicros = Math.floor((30 * dayMs * 1000) / Math.floor(total / spansPerTrace))
  // i: the span; t: its trace; j: its place in the trace (0 is the agent span, the root).
  return (low, high) => sql`
    insert into spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code,
      service_name, llm_vendor, llm_model, llm_request_type, input_tokens, output_tokens, total_tokens, total_cost_usd,
      session_id, user_id, attributes, resource_attributes, events, links)
    select (${projects}::text[])[t % 3 + 1], md5('t' || t), lpad(to_hex(i), 16, '0'),
      case when j = 0 then null else lpad(to_hex(t * 8), 16, '0') end,
      case when j = 0 then 'agent.run' else 'chat ' || model end, case when j = 0 then 1 else 3 end,
      ${from}::timestamptz + (t::bigint * ${stepMicros} + j * 150000) * interval '1 microsecond',
      ${from}::timestamptz + (t::bigint * ${stepMicros} + j * 150000 + case when j = 0 then 1200000 else 100000 + (i % 900) * 1000 end) * interval '1 microsecond',
      (case when j = 0 then 1200000 else 100000 + (i % 900) * 1000 end)::bigint * 1000,
      case when t % 50 = 0 and j = 1 then 2 else 0 end,
      'svc-' || (t % 5),
      case when j = 0 then null else (array['openai', 'anthropic', 'openai', 'aws.bedrock'])[model_index] end,
      case when j = 0 then null else model end, case when j = 0 then null else 'chat' end,
      case when j = 0 then null else 200 + i % 800 end, case when j = 0 then null else 50 + i % 300 end,
      case when j = 0 then null else 250 + i % 800 + i % 300 end,
      case when j = 0 then null else ((200 + i % 800) * 2.5 + (50 + i % 300) * 10) / 1000000 end,
      'sess-' || (t / 5), 'user-' || (t % 1000),
      jsonb_build_object(
        'gen_ai.prompt.0.role', jsonb_build_object('stringValue', 'user'),
        'gen_ai.prompt.0.content', jsonb_build_object('stringValue', 'word' || (i % 100003) || ' ' || repeat(md5(i::text) || ' ', 20)),
        'gen_ai.completion.0.content', jsonb_build_object('stringValue', repeat(md5((i + 1)::text) || ' ', 12)),
        'customer.tier', jsonb_build_object('stringValue', case when t % 7 = 0 then 'gold' else 'basic' end)),
      jsonb_build_object('service.name', jsonb_build_object('stringValue', 'svc-' || (t % 5))), '[]'::jsonb, '[]'::jsonb
    from (select i, i / ${spansPerTrace} as t, i % ${spansPerTrace} as j, 1 + i % 4 as model_index,
            (array['gpt-4o', 'claude-sonnet-4', 'gpt-4o-mini', 'llama-3-70b'])[1 + i % 4] as model
          from generate_series(${low}::bigint, ${high}::bigint) as i) s`
}

/**
 * bench:cleanup:days's spans: `total` of three projects spread evenly from `from` to `to`, oldest
 * first, ten consecutive spans a trace of one project, five traces a session, rows of ~450 bytes
 * (an LLM call's attributes).
 */
export function expirySpans(projects: readonly string[], from: Date, to: Date, total: number): (low: number, high: number) => RawBuilder<unknown> {
  const spansPerTrace = 10
  const stepMicros = Math.floor(((to.getTime() - from.getTime()) * 1000) / total)
  return (low, high) => sql`
    insert into spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code,
      service_name, llm_vendor, llm_model, llm_request_type, input_tokens, output_tokens, total_tokens, session_id, user_id,
      attributes, resource_attributes, events, links)
    select (${projects}::text[])[1 + (i / ${spansPerTrace}) % 3], md5((i / ${spansPerTrace})::text), lpad(to_hex(i), 16, '0'),
      case when i % ${spansPerTrace} = 0 then null else lpad(to_hex(i - i % ${spansPerTrace}), 16, '0') end,
      'openai.chat.completions.create', 3,
      ${from}::timestamptz + (i::bigint * ${stepMicros}) * interval '1 microsecond',
      ${from}::timestamptz + (i::bigint * ${stepMicros}) * interval '1 microsecond' + interval '800 milliseconds',
      800000000, 0, 'bench-app', 'openai', 'gpt-4o', 'chat_completion', 120, 40, 160,
      'session-' || (i / ${spansPerTrace * 5}), 'user-' || (i % 1000),
      jsonb_build_object('llm.prompts', repeat(md5(i::text), 8), 'llm.model', 'gpt-4o'),
      '{"service.name":"bench-app"}'::jsonb, '[]'::jsonb, '[]'::jsonb
    from generate_series(${low}::int, ${high}::int) as i`
}

/** Runs a statement with room to sort a day's rows in memory (~330,000 spans a day at 10 million). */
function inMemory(db: Db, statement: RawBuilder<unknown>): Promise<void> {
  return db.transaction().execute(async (trx) => {
    await sql`set local work_mem = '256MB'`.execute(trx)
    await statement.execute(trx)
  })
}

/** Runs `work` over `items`, CONNECTIONS at a time, in order of start. */
async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (next < items.length) await work(items[next++] as T)
  }))
}

export interface SummaryTimings {
  traceSummariesMs: number
  usageRollupsMs: number
  sessionSummariesMs: number
}

/**
 * Builds trace summaries (with word filters when `textFilters`), usage rollups and session
 * summaries from every stored span, into empty tables; answers the time each took.
 */
export async function buildSummaries(db: Db, { textFilters }: { textFilters: boolean }): Promise<SummaryTimings> {
  const { rows: [range] } = await sql<{ first: Date | null; last: Date | null }>`select min(start_time) as first, max(start_time) as last from spans`.execute(db)
  if (!range?.first || !range.last) return { traceSummariesMs: 0, usageRollupsMs: 0, sessionSummariesMs: 0 }
  const days: Date[] = []
  for (let day = startOfUtcDay(range.first).getTime(); day <= range.last.getTime(); day += dayMs) days.push(new Date(day))

  let started = performance.now()
  // Days in order on one connection: the rows lie in the table in time order, as the writer's
  // do (the janitor's row deletes by stretches of time rely on it). The word filters of the next
  // day are read and computed meanwhile on a second connection.
  let filters = textFilters ? wordFiltersOf(db, days[0] as Date) : Promise.resolve(null)
  for (const [i, day] of days.entries()) {
    const these = await filters
    const after = days[i + 1]
    filters = textFilters && after ? wordFiltersOf(db, after) : Promise.resolve(null)
    await insertTraceSummaries(db, day, these?.traces ?? null)
    if (these) await addWordsToTextBlocks(db, these.blocks)
  }
  await filters
  const traceSummariesMs = performance.now() - started
  const { rows: [counted] } = await sql<{ summarised: string; stored: string }>`
    select (select coalesce(sum(span_count), 0) from trace_summaries)::text as summarised, (select count(*) from spans)::text as stored`.execute(db)
  if (counted?.summarised !== counted?.stored) {
    throw new Error(`trace summaries count ${counted?.summarised} spans of ${counted?.stored}: a trace's spans lie beyond ${TRACE_SPILL_MS / 60_000} min past its day`)
  }

  started = performance.now()
  await inParallel(days, (day) => insertUsageRollups(db, day))
  // The whole traces' figures (error traces, duration histograms, session, prompt and tag rows) as
  // the trace-rollups migration computes them from the summaries, then the rows of who was active
  // each day from those hours, as the active-days migration does, the users' figures and hours of
  // the day as the user-day-figures and user-day-hours migrations do, and the traces' shapes.
  await backfillTraceRollups(db)
  await backfillActiveDays(db)
  await backfillUserDayFigures(db)
  await backfillUserDayHours(db)
  await backfillTraceShapes(db)
  const usageRollupsMs = performance.now() - started

  started = performance.now()
  await insertSessionSummaries(db)
  const sessionSummariesMs = performance.now() - started
  return { traceSummariesMs, usageRollupsMs, sessionSummariesMs }
}

// A span that sums the calls beneath it adds neither tokens, cost nor latency (the writer's AGGREGATE_OPERATION).
const COUNTED = sql`llm_request_type is distinct from 'invoke_agent'`
// A span's total tokens: as reported, else its input and output added, else unknown (the writer's spanTotalTokens).
const SPAN_TOTAL = sql`coalesce(total_tokens, case when input_tokens is null and output_tokens is null then null else coalesce(input_tokens, 0) + coalesce(output_tokens, 0) end)`

/**
 * The spans that may belong to traces starting on `day`: those of the day and of the spill after
 * it, and of the spill before it too, so that a trace that started the day before shows its true
 * start there (and is left to its own day) instead of looking as if it started at midnight.
 */
const spansNear = (day: Date) => sql`start_time >= ${new Date(day.getTime() - TRACE_SPILL_MS)} and start_time < ${new Date(day.getTime() + dayMs + TRACE_SPILL_MS)}`

/**
 * The word filters (hexadecimal, as the fold writes them) of the traces with a span near `day`,
 * from their spans' attributes, events and status messages read as the writer reads them (JSON
 * text as UTF-8 bytes), and the words of the blocks of ten minutes of the traces that started on
 * `day` (a block holds the words of the traces that started in it).
 */
async function wordFiltersOf(db: Db, day: Date): Promise<{ traces: string; blocks: TextBlockWords[] }> {
  const { rows } = await sql<{ project_id: string; trace_id: string; start_ms: number; attributes: string; events: string; status_message: string | null }>`
    select project_id, trace_id, extract(epoch from start_time)::float8 * 1000 as start_ms, attributes::text as attributes, events::text as events, status_message
    from spans where ${spansNear(day)}`.execute(db)
  const words = new Map<string, { project_id: string; trace_id: string; startMs: number; words: TextFilterWords }>()
  for (const span of rows) {
    const key = `${span.project_id}\u0000${span.trace_id}`
    let trace = words.get(key)
    if (trace === undefined) words.set(key, (trace = { project_id: span.project_id, trace_id: span.trace_id, startMs: span.start_ms, words: new TextFilterWords() }))
    trace.startMs = Math.min(trace.startMs, span.start_ms)
    trace.words.addJson(Buffer.from(span.attributes))
    trace.words.addJson(Buffer.from(span.events))
    if (span.status_message) trace.words.addJson(Buffer.from(JSON.stringify(span.status_message)))
  }
  const ofDay = [...words.values()].filter((trace) => trace.startMs >= day.getTime() && trace.startMs < day.getTime() + dayMs)
  return {
    traces: JSON.stringify([...words.values()].map(({ project_id, trace_id, words: filter }) => ({ project_id, trace_id, text_filter: filter.toHex() }))),
    blocks: wordsByBlock(ofDay.map((trace) => ({ projectId: trace.project_id, startMs: trace.startMs, words: trace.words }))),
  }
}

/** The summaries of the traces whose first span is on `day`, in order of start, with their word filters when given. */
async function insertTraceSummaries(db: Db, day: Date, filters: string | null): Promise<void> {
  await inMemory(db, sql`
    insert into trace_summaries (project_id, trace_id, name, has_root, service_name, start_time, end_time, duration_us, span_count, error_count,
      models, response_models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, tokens_estimated, session_id, user_id, text_filter,
      fold_day, words_in_blocks)
    select t.*, ('x' || f.text_filter)::varbit, ${isoDay(day)}::date, true
    from (
      select project_id, trace_id,
        coalesce((array_agg(name order by start_time) filter (where parent_span_id is null))[1], (array_agg(name order by start_time))[1]) as name,
        bool_or(parent_span_id is null) as has_root,
        coalesce((array_agg(service_name order by start_time) filter (where parent_span_id is null))[1],
          (array_agg(service_name order by start_time) filter (where service_name is not null))[1]) as service_name,
        min(start_time) as start_time, max(end_time) as end_time,
        (extract(epoch from max(end_time) - min(start_time)) * 1000000)::bigint as duration_us,
        count(*)::integer as span_count, (count(*) filter (where status_code = 2))::integer as error_count,
        coalesce(array_agg(distinct llm_model) filter (where llm_model is not null), '{}') as models,
        coalesce(array_agg(distinct llm_response_model) filter (where llm_response_model is not null and llm_response_model is distinct from llm_model), '{}') as response_models,
        coalesce(array_agg(distinct llm_vendor) filter (where llm_vendor is not null), '{}') as vendors,
        coalesce(array_agg(distinct service_name) filter (where service_name is not null), '{}') as services,
        sum(input_tokens) filter (where ${COUNTED}) as input_tokens,
        sum(output_tokens) filter (where ${COUNTED}) as output_tokens,
        sum(${SPAN_TOTAL}) filter (where ${COUNTED}) as total_tokens,
        sum(total_cost_usd) filter (where ${COUNTED}) as cost_usd,
        bool_or(tokens_estimated) as tokens_estimated,
        (array_agg(session_id order by start_time) filter (where session_id is not null))[1] as session_id,
        (array_agg(user_id order by start_time) filter (where user_id is not null))[1] as user_id
      from spans where ${spansNear(day)}
      group by project_id, trace_id
      having min(start_time) >= ${day} and min(start_time) < ${new Date(day.getTime() + dayMs)}
    ) t
    left join json_to_recordset(${filters ?? '[]'}::json) as f(project_id text, trace_id text, text_filter text)
      on f.project_id = t.project_id and f.trace_id = t.trace_id
    order by t.start_time`)
}

/**
 * The usage rollups of `day`'s hours: spans, errors, tokens, cost and latency from the spans that
 * started in each hour; traces from the traces that started in it, under each of their values.
 */
async function insertUsageRollups(db: Db, day: Date): Promise<void> {
  const to = new Date(day.getTime() + dayMs)
  await inMemory(db, sql`
    -- Each span's hour and figures computed once, then its five rollup rows. The hour by
    -- date_bin (arithmetic; date_trunc in 'UTC' looked the zone up for every row, most of the
    -- statement's time), the bucket in float8 as the writer computes it (latencyBucket), not numeric.
    with span as (
      select project_id, date_bin('1 hour', start_time, timestamptz '2000-01-01 00:00:00+00') as hour, status_code,
        llm_model, llm_vendor, service_name, user_id,
        case when ${COUNTED} then input_tokens end as input_tokens,
        case when ${COUNTED} then output_tokens end as output_tokens,
        case when ${COUNTED} then total_cost_usd end as cost_usd,
        case when llm_model is null or not (${COUNTED}) then null
          when duration_ns < 1000 then 0
          else least(127, floor(4 * ln(duration_ns / 1000.0::float8) / ln(2::float8)))::integer end as bucket
      from spans where start_time >= ${day} and start_time < ${to}
    ),
    by_span as (
      select project_id, hour, d.dimension, d.value, status_code, input_tokens, output_tokens, cost_usd, bucket
      from span cross join lateral (values ('all', ''), ('model', coalesce(llm_model, '')), ('vendor', coalesce(llm_vendor, '')),
        ('service', coalesce(service_name, '')), ('user', coalesce(user_id, ''))) as d(dimension, value)
    ),
    span_figures as (
      select project_id, dimension, hour, value, count(*)::integer as spans, (count(*) filter (where status_code = 2))::integer as errors,
        sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_usd) as cost_usd
      from by_span group by 1, 2, 3, 4
    ),
    -- A row's calls by bucket, then its 128 buckets as an array (a join of every row with every
    -- bucket was planned as a nested loop over the day's rows: quadratic).
    counts as (
      select project_id, dimension, hour, value, array_agg(bucket) as buckets, array_agg(calls) as calls
      from (select project_id, dimension, hour, value, bucket, count(*)::integer as calls from by_span where bucket is not null group by 1, 2, 3, 4, 5) c
      group by 1, 2, 3, 4
    ),
    latency as (
      select project_id, dimension, hour, value, array(select coalesce(calls[array_position(buckets, i)], 0) from generate_series(0, 127) as i) as latency
      from counts
    ),
    trace_figures as (
      select t.project_id, k.dimension, date_bin('1 hour', t.start_time, timestamptz '2000-01-01 00:00:00+00') as hour, k.value, count(*)::integer as traces
      from trace_summaries t cross join lateral tracewell_trace_rollup_keys(t.models, t.vendors, t.services, t.user_id) as k
      where t.start_time >= ${day} and t.start_time < ${to}
      group by 1, 2, 3, 4
    )
    insert into usage_rollups (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
    select project_id, dimension, hour, value, coalesce(t.traces, 0), coalesce(f.spans, 0), coalesce(f.errors, 0),
      f.input_tokens, f.output_tokens, f.cost_usd, coalesce(l.latency, array_fill(0, array[128]))
    from span_figures f
    full join trace_figures t using (project_id, dimension, hour, value)
    left join latency l using (project_id, dimension, hour, value)
    order by hour`)
}

/**
 * Every session's row, from its traces' summaries, as the summariser recomputes it
 * (recomputeSessions). The summaries are made on the day of their trace's start, the sessions on
 * the day of their last trace's (at the latest today): as a summariser running with the traffic
 * would have made them, so that a day's expiry drops them with its spans.
 */
async function insertSessionSummaries(db: Db): Promise<void> {
  await inMemory(db, sql`
    insert into session_summaries (project_id, session_id, user_id, first_seen, last_seen, trace_count, total_tokens, cost_usd, fold_day)
    select project_id, session_id, (array_agg(user_id order by start_time) filter (where user_id is not null))[1],
      min(start_time), max(end_time), count(*)::integer, sum(total_tokens), sum(cost_usd),
      least((max(end_time) at time zone 'UTC')::date, (now() at time zone 'UTC')::date)
    from trace_summaries where session_id is not null
    group by project_id, session_id
    order by max(end_time)`)
}
