import { recomputeSessions, sql, toStorableJson, type Db } from '@tracewell/db'
import { mergeTraceDelta, type TraceDelta } from './trace-deltas.ts'
import { UsageCombinationMerge, type UsageCombination } from './usage-deltas.ts'

// The write path's second step: the summary deltas that stored batches left (summary-delta.ts)
// folded into trace_summaries, usage_rollups and session_summaries, in one transaction that also
// deletes them, so every delta is added exactly once whatever process dies when: a fold that does
// not commit leaves its deltas to the next one.
//
// One fold at a time, whoever runs it: a transaction-level advisory lock taken with try, so a
// second summariser (every writer runs one) skips its turn instead of waiting, and no writer's
// transaction ever touches these tables. Batches are merged in memory first (a trace's spans
// often come in several batches), so each summary row is written once per fold.
//
// Every statement is planned from the shapes of its keys, not from statistics (a table that was
// never analysed must not turn a lookup into a scan): rows are found by primary key or through a
// lateral subquery on an index.

/** The advisory lock key of the fold (an arbitrary constant: 'tracewell summaries' hashed). */
const FOLD_LOCK = 7_215_501_872_340_113n

export interface FoldLimits {
  /** Deltas are claimed, oldest first, until they hold this many traces (one at least). */
  maxTraces: number
  /** And at most this many deltas. */
  maxDeltas: number
}

export const DEFAULT_FOLD_LIMITS: FoldLimits = { maxTraces: 10_000, maxDeltas: 500 }

/** What one fold did; `busy` when another fold held the lock. */
export type FoldResult = { deltas: number; traces: number } | 'busy'

/**
 * Folds the oldest summary deltas into the summaries, in a transaction of its own; answers how
 * many deltas and distinct traces it folded (0 when none was waiting).
 */
export function foldSummaryDeltas(db: Db, limits: FoldLimits = DEFAULT_FOLD_LIMITS): Promise<FoldResult> {
  return db.transaction().execute(async (trx) => {
    const { rows: lock } = await sql<{ held: boolean }>`select pg_try_advisory_xact_lock(${FOLD_LOCK}) as held`.execute(trx)
    if (lock[0]?.held !== true) return 'busy'
    // The running sum is over a bounded number of the oldest deltas, so the claim reads no more.
    const { rows: claimed } = await sql<{ traces: string; usage: string }>`
      delete from summary_deltas where id in (
        select id from (
          select id, trace_count, sum(trace_count) over (order by id) as running
          from (select id, trace_count from summary_deltas order by id limit ${limits.maxDeltas}) as oldest) as claim
        where running - trace_count < ${limits.maxTraces})
      returning traces::text as traces, usage::text as usage`.execute(trx)
    if (claimed.length === 0) return { deltas: 0, traces: 0 }

    const traces = new Map<string, TraceDelta>()
    const usage = new UsageCombinationMerge()
    for (const row of claimed) {
      // Our own JSON, keys without escapes: JSON.parse reads it exactly (see @tracewell/json-text).
      for (const delta of JSON.parse(row.traces) as TraceDelta[]) {
        const key = `${delta.project_id}\u0000${delta.trace_id}`
        const into = traces.get(key)
        if (into === undefined) traces.set(key, delta)
        else mergeTraceDelta(into, delta)
      }
      for (const combination of JSON.parse(row.usage) as UsageCombination[]) usage.add(combination)
    }
    // In key order, so that two transactions writing the same rows (a fold and the janitor) lock them in one order.
    const traceRows = [...traces.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, delta]) => delta)
    const { rows: sessions } = await sql<{ project_id: string; session_id: string }>`
      with b as (
        select * from jsonb_to_recordset(${toStorableJson(JSON.stringify(traceRows))}::jsonb) as b(project_id text, trace_id text, name text,
          has_root boolean, service_name text, start_time timestamptz, end_time timestamptz, span_count integer, error_count integer,
          models text[], vendors text[], services text[], input_tokens bigint, output_tokens bigint, total_tokens bigint, cost_usd numeric,
          session_id text, user_id text, text_filter text)
      ),
      -- The traces' rows before this fold: the statement's sub-statements share one snapshot, so
      -- this reads them as they were, while the upsert below changes them.
      old as (
        select s.project_id, s.start_time, s.models, s.vendors, s.services, s.user_id
        from b join trace_summaries s using (project_id, trace_id)
      ),
      upserted as (
        insert into trace_summaries as s (project_id, trace_id, name, has_root, service_name, start_time, end_time, duration_us,
          span_count, error_count, models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id, text_filter)
        select project_id, trace_id, name, has_root, service_name, start_time, end_time,
          (extract(epoch from end_time - start_time) * 1000000)::bigint,
          span_count, error_count, models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id,
          ('x' || text_filter)::varbit
        from b
        on conflict (project_id, trace_id) do update set
          -- The root names the trace; until it arrives, the earliest span does.
          name = case when s.has_root then s.name when excluded.has_root or excluded.start_time < s.start_time then excluded.name else s.name end,
          service_name = case when s.has_root then s.service_name when excluded.has_root or excluded.start_time < s.start_time then coalesce(excluded.service_name, s.service_name) else s.service_name end,
          has_root = s.has_root or excluded.has_root,
          start_time = least(s.start_time, excluded.start_time),
          end_time = greatest(s.end_time, excluded.end_time),
          duration_us = (extract(epoch from greatest(s.end_time, excluded.end_time) - least(s.start_time, excluded.start_time)) * 1000000)::bigint,
          span_count = s.span_count + excluded.span_count,
          error_count = s.error_count + excluded.error_count,
          models = array(select distinct unnest(s.models || excluded.models) order by 1),
          vendors = array(select distinct unnest(s.vendors || excluded.vendors) order by 1),
          services = array(select distinct unnest(s.services || excluded.services) order by 1),
          input_tokens = s.input_tokens + excluded.input_tokens,
          output_tokens = s.output_tokens + excluded.output_tokens,
          total_tokens = s.total_tokens + excluded.total_tokens,
          cost_usd = case when s.cost_usd is null then excluded.cost_usd when excluded.cost_usd is null then s.cost_usd else s.cost_usd + excluded.cost_usd end,
          session_id = coalesce(s.session_id, excluded.session_id),
          user_id = coalesce(s.user_id, excluded.user_id),
          text_filter = tracewell_text_filter_union(s.text_filter, excluded.text_filter)
        returning s.project_id, s.start_time, s.models, s.vendors, s.services, s.user_id, s.session_id
      ),
      -- A trace counts in the rollup rows of the hour it started, under each of its values: what
      -- it counted in before this fold is taken back, what it counts in now is added, and the two
      -- cancel out for a trace whose start and values did not change.
      trace_counts as (
        select project_id, dimension, hour, value, sum(change)::integer as traces
        from (
          select o.project_id, k.dimension, date_trunc('hour', o.start_time, 'UTC') as hour, k.value, -1 as change
          from old o cross join lateral tracewell_trace_rollup_keys(o.models, o.vendors, o.services, o.user_id) as k
          union all
          select u.project_id, k.dimension, date_trunc('hour', u.start_time, 'UTC'), k.value, 1
          from upserted u cross join lateral tracewell_trace_rollup_keys(u.models, u.vendors, u.services, u.user_id) as k
        ) as changes
        group by 1, 2, 3, 4
        having sum(change) <> 0
      ),
      r as (
        select * from jsonb_to_recordset(${JSON.stringify(usage.rollupRows())}::jsonb) as r(project_id text, dimension text, hour timestamptz,
          value text, spans integer, errors integer, input_tokens bigint, output_tokens bigint, cost_usd numeric, latency integer[])
      ),
      rolled_up as (
        insert into usage_rollups as u (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
        select project_id, dimension, hour, value, coalesce(t.traces, 0), coalesce(r.spans, 0), coalesce(r.errors, 0),
          coalesce(r.input_tokens, 0), coalesce(r.output_tokens, 0), r.cost_usd, coalesce(r.latency, array_fill(0, array[128]))
        from r full join trace_counts t using (project_id, dimension, hour, value)
        order by 1, 2, 3, 4
        on conflict (project_id, dimension, hour, value) do update set
          traces = u.traces + excluded.traces,
          spans = u.spans + excluded.spans,
          errors = u.errors + excluded.errors,
          input_tokens = u.input_tokens + excluded.input_tokens,
          output_tokens = u.output_tokens + excluded.output_tokens,
          cost_usd = case when u.cost_usd is null then excluded.cost_usd when excluded.cost_usd is null then u.cost_usd else u.cost_usd + excluded.cost_usd end,
          latency = array(select x + y from unnest(u.latency, excluded.latency) as l(x, y))
      )
      select distinct project_id, session_id from upserted where session_id is not null order by 1, 2`.execute(trx)
    if (sessions.length > 0) await recomputeSessions(trx, sessions)
    return { deltas: claimed.length, traces: traces.size }
  })
}
