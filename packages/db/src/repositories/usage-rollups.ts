import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import type { SpanInsert } from './span-rows.ts'
import { toStorableJson, toStorableText } from './storable-text.ts'
import { AGGREGATE_OPERATION } from './trace-summaries.ts'

// The writer's side of usage_rollups (migration 2026-11-25T0500): a batch's spans folded into one
// row per project, dimension, value and UTC hour in memory, then added to the stored rows in one
// statement, in the transaction that stores the spans. Only spans that were inserted may be folded
// in, so a redelivered job adds nothing.
//
// A trace counts once per row: the statement counts it only when none of its spans stored before
// this batch falls in the same hour and value. Two writers storing spans of one trace, same hour
// and value, at the same moment would both count it (neither sees the other's uncommitted rows);
// a trace's spans normally travel in one batch, so this is rare, and it only ever overcounts.

type RollupSpan = Pick<
  SpanInsert,
  'traceId' | 'spanId' | 'startTimeUnixNano' | 'durationNs' | 'statusCode' | 'serviceName' | 'llmModel' | 'llmVendor' | 'llmRequestType' | 'inputTokens' | 'outputTokens' | 'totalCostUsd' | 'userId'
>

export const LATENCY_BUCKETS = 128

/** The latency bucket of a duration: bucket i holds [2^(i/4), 2^((i+1)/4)) µs (the migration's formula). */
export function latencyBucket(durationNs: number): number {
  const micros = durationNs / 1000
  if (micros < 1) return 0
  return Math.min(LATENCY_BUCKETS - 1, Math.floor((4 * Math.log(micros)) / Math.LN2))
}

/** The duration, in ms, a bucket stands for: its geometric middle, within 9.1% of any duration in it. */
export function latencyBucketMs(bucket: number): number {
  return 2 ** ((bucket + 0.5) / 4) / 1000
}

interface RollupDelta {
  project_id: string
  dimension: string
  hour: string
  value: string
  spans: number
  errors: number
  input_tokens: number
  output_tokens: number
  cost_usd: number | null
  latency: number[]
}

interface TraceKey {
  project_id: string
  dimension: string
  hour: string
  value: string
  trace_id: string
}

interface BatchTrace {
  project_id: string
  trace_id: string
  span_ids: string[]
}

const ERROR = 2

// Keys as the database will hold them: two values that store as the same text are one row.
const stored = (text: string): string => toStorableText(text).toWellFormed()
const HOUR_NS = 3_600_000_000_000n

/** A batch's spans, one row per project, dimension, value and hour. */
export class UsageRollupBatch {
  readonly #rows = new Map<string, RollupDelta>()
  readonly #keys = new Map<string, TraceKey>()
  readonly #traces = new Map<string, BatchTrace>()

  get size(): number {
    return this.#rows.size
  }

  add(rawProjectId: string, span: RollupSpan): void {
    const projectId = stored(rawProjectId)
    const hourNs = (BigInt(span.startTimeUnixNano) / HOUR_NS) * HOUR_NS
    const hour = new Date(Number(hourNs / 1_000_000n)).toISOString()
    // A span that sums the calls beneath it adds neither tokens, cost nor a call's latency: its
    // children do (AGGREGATE_OPERATION, as for trace totals).
    const isCall = span.llmRequestType !== AGGREGATE_OPERATION
    const bucket = span.llmModel && isCall ? latencyBucket(Number(span.durationNs)) : -1
    const traceKey = `${projectId}\u0000${span.traceId}`
    const trace = this.#traces.get(traceKey)
    if (trace === undefined) this.#traces.set(traceKey, { project_id: projectId, trace_id: span.traceId, span_ids: [span.spanId] })
    else trace.span_ids.push(span.spanId)
    for (const [dimension, value] of [
      ['all', ''], ['model', stored(span.llmModel ?? '')], ['vendor', stored(span.llmVendor ?? '')], ['service', stored(span.serviceName ?? '')], ['user', stored(span.userId ?? '')],
    ] as const) {
      const key = `${projectId}\u0000${dimension}\u0000${hour}\u0000${value}`
      let row = this.#rows.get(key)
      if (row === undefined) {
        row = { project_id: projectId, dimension, hour, value, spans: 0, errors: 0, input_tokens: 0, output_tokens: 0, cost_usd: null, latency: new Array<number>(LATENCY_BUCKETS).fill(0) }
        this.#rows.set(key, row)
      }
      row.spans++
      if (span.statusCode === ERROR) row.errors++
      if (isCall) {
        row.input_tokens += span.inputTokens ?? 0
        row.output_tokens += span.outputTokens ?? 0
        if (span.totalCostUsd !== null && span.totalCostUsd !== undefined) row.cost_usd = (row.cost_usd ?? 0) + span.totalCostUsd
      }
      if (bucket >= 0) (row.latency[bucket] as number)++
      const rowTraceKey = `${key}\u0000${span.traceId}`
      if (!this.#keys.has(rowTraceKey)) this.#keys.set(rowTraceKey, { project_id: projectId, dimension, hour, value, trace_id: span.traceId })
    }
  }

  /** The rows and trace keys as the upsert reads them, rows in key order so that concurrent writers lock rows in one order. */
  toJson(): string {
    const rows = [...this.#rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
    // Text as the spans' own columns store it: jsonb refuses U+0000 and lone surrogates.
    return toStorableJson(JSON.stringify({ rows, keys: [...this.#keys.values()], traces: [...this.#traces.values()] }))
  }
}

/** The upsert of a UsageRollupBatch for a pg client: its text and its one parameter. */
export function usageRollupUpsert(batch: UsageRollupBatch): { text: string; values: [string] } {
  return { text: upsertText, values: [batch.toJson()] }
}

/** Adds a batch's rows to usage_rollups; after the batch's spans are inserted. */
export async function upsertUsageRollups(db: Executor, batch: UsageRollupBatch): Promise<void> {
  if (batch.size === 0) return
  const [head, tail] = upsertText.split('$1') as [string, string]
  await sql`${sql.raw(head)}${batch.toJson()}${sql.raw(tail)}`.execute(db)
}

// A trace is new to a row when no span of it outside this batch (those are already inserted, in
// this transaction) lies in the row's hour with the row's value. Only a trace whose summary (upserted
// before, in this transaction) counts more spans than the batch brought has such spans, so only
// those are looked up.
const upsertText = `
  with batch as (select $1::jsonb as doc),
  b as (
    select b.* from batch, jsonb_to_recordset(batch.doc -> 'rows') as b(project_id text, dimension text, hour timestamptz, value text,
      spans integer, errors integer, input_tokens bigint, output_tokens bigint, cost_usd numeric, latency integer[])
  ),
  earlier as (
    select t.project_id, t.trace_id, t.span_ids
    from batch, jsonb_to_recordset(batch.doc -> 'traces') as t(project_id text, trace_id text, span_ids text[])
    join trace_summaries s using (project_id, trace_id)
    where s.span_count > cardinality(t.span_ids)
  ),
  k as (
    select k.* from batch, jsonb_to_recordset(batch.doc -> 'keys') as k(project_id text, dimension text, hour timestamptz, value text, trace_id text)
  ),
  n as (
    select k.project_id, k.dimension, k.hour, k.value, count(*)::integer as traces
    from k left join earlier e using (project_id, trace_id)
    where case when e.trace_id is null then true else not exists (
      select 1 from spans s
      where s.project_id = k.project_id and s.trace_id = k.trace_id and s.start_time >= k.hour and s.start_time < k.hour + interval '1 hour'
        and s.span_id <> all(e.span_ids)
        and case k.dimension when 'all' then true when 'model' then coalesce(s.llm_model, '') = k.value
          when 'vendor' then coalesce(s.llm_vendor, '') = k.value when 'service' then coalesce(s.service_name, '') = k.value
          else coalesce(s.user_id, '') = k.value end) end
    group by 1, 2, 3, 4
  )
  insert into usage_rollups as r (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
  select b.project_id, b.dimension, b.hour, b.value, coalesce(n.traces, 0), b.spans, b.errors, b.input_tokens, b.output_tokens, b.cost_usd, b.latency
  from b left join n using (project_id, dimension, hour, value)
  order by b.project_id, b.dimension, b.hour, b.value
  on conflict (project_id, dimension, hour, value) do update set
    traces = r.traces + excluded.traces,
    spans = r.spans + excluded.spans,
    errors = r.errors + excluded.errors,
    input_tokens = r.input_tokens + excluded.input_tokens,
    output_tokens = r.output_tokens + excluded.output_tokens,
    cost_usd = case when r.cost_usd is null then excluded.cost_usd when excluded.cost_usd is null then r.cost_usd else r.cost_usd + excluded.cost_usd end,
    latency = array(select x + y from unnest(r.latency, excluded.latency) as u(x, y))`
