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
  'traceId' | 'startTimeUnixNano' | 'durationNs' | 'statusCode' | 'serviceName' | 'llmModel' | 'llmVendor' | 'llmRequestType' | 'inputTokens' | 'outputTokens' | 'totalCostUsd' | 'userId'
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

/**
 * The spans of a batch that share a project, an hour and all four values (model, vendor, service,
 * user): a batch holds few of these, so a span costs one key and one lookup, and the five rows
 * per combination are made once, when the batch is written.
 */
interface Combination {
  project_id: string
  hour: string
  values: readonly [model: string, vendor: string, service: string, user: string]
  spans: number
  errors: number
  input_tokens: number
  output_tokens: number
  cost_usd: number | null
  /** Latency bucket → calls; sparse, as a batch's calls fall in a few of the 128 buckets. */
  latency: Map<number, number>
  traces: Set<string>
}

const DIMENSIONS = ['model', 'vendor', 'service', 'user'] as const

const ERROR = 2

// Keys as the database will hold them: two values that store as the same text are one row.
const stored = (text: string | null | undefined): string => (text ? toStorableText(text).toWellFormed() : '')
const HOUR_SECONDS = 3600

/** A batch's spans, one row per project, dimension, value and hour. */
export class UsageRollupBatch {
  readonly #combinations = new Map<string, Combination>()
  /** Per trace (project and trace id), its spans in this batch. */
  readonly #traces = new Map<string, { project_id: string; trace_id: string; spans: number }>()
  /** The hour (ISO) of each second (as the nanosecond text's leading digits) seen. */
  readonly #hours = new Map<string, string>()

  /** The number of combinations (each makes at most five rows); 0 for an empty batch. */
  get size(): number {
    return this.#combinations.size
  }

  add(rawProjectId: string, span: RollupSpan): void {
    const projectId = stored(rawProjectId)
    const hour = this.#hourOf(span.startTimeUnixNano)
    const values = [stored(span.llmModel), stored(span.llmVendor), stored(span.serviceName), stored(span.userId)] as const
    // U+0000 separates safely: stored text holds none.
    const key = `${projectId}\u0000${hour}\u0000${values[0]}\u0000${values[1]}\u0000${values[2]}\u0000${values[3]}`
    let combination = this.#combinations.get(key)
    if (combination === undefined) {
      combination = { project_id: projectId, hour, values, spans: 0, errors: 0, input_tokens: 0, output_tokens: 0, cost_usd: null, latency: new Map(), traces: new Set() }
      this.#combinations.set(key, combination)
    }
    combination.spans++
    if (span.statusCode === ERROR) combination.errors++
    // A span that sums the calls beneath it adds neither tokens, cost nor a call's latency: its
    // children do (AGGREGATE_OPERATION, as for trace totals).
    if (span.llmRequestType !== AGGREGATE_OPERATION) {
      combination.input_tokens += span.inputTokens ?? 0
      combination.output_tokens += span.outputTokens ?? 0
      if (span.totalCostUsd !== null && span.totalCostUsd !== undefined) combination.cost_usd = (combination.cost_usd ?? 0) + span.totalCostUsd
      if (span.llmModel) {
        const bucket = latencyBucket(Number(span.durationNs))
        combination.latency.set(bucket, (combination.latency.get(bucket) ?? 0) + 1)
      }
    }
    combination.traces.add(span.traceId)
    const traceKey = `${projectId}\u0000${span.traceId}`
    const trace = this.#traces.get(traceKey)
    if (trace === undefined) this.#traces.set(traceKey, { project_id: projectId, trace_id: span.traceId, spans: 1 })
    else trace.spans++
  }

  /** The UTC hour of a time in nanoseconds since the epoch (decimal), as ISO 8601. */
  #hourOf(nanos: string): string {
    const seconds = nanos.length > 9 ? nanos.slice(0, -9) : '0'
    let hour = this.#hours.get(seconds)
    if (hour === undefined) {
      hour = new Date(Math.floor(Number(seconds) / HOUR_SECONDS) * HOUR_SECONDS * 1000).toISOString()
      this.#hours.set(seconds, hour)
    }
    return hour
  }

  /** The rows, trace keys and traces as the upsert reads them, rows in key order so that concurrent writers lock rows in one order. */
  toJson(): string {
    const rows = new Map<string, RollupDelta>()
    const keys = new Map<string, TraceKey>()
    for (const combination of this.#combinations.values()) {
      const dimensions: Array<[string, string]> = [['all', ''], ...DIMENSIONS.map((dimension, i) => [dimension, combination.values[i] as string] as [string, string])]
      for (const [dimension, value] of dimensions) {
        const key = `${combination.project_id}\u0000${dimension}\u0000${combination.hour}\u0000${value}`
        let row = rows.get(key)
        if (row === undefined) {
          row = { project_id: combination.project_id, dimension, hour: combination.hour, value, spans: 0, errors: 0, input_tokens: 0, output_tokens: 0, cost_usd: null, latency: new Array<number>(LATENCY_BUCKETS).fill(0) }
          rows.set(key, row)
        }
        row.spans += combination.spans
        row.errors += combination.errors
        row.input_tokens += combination.input_tokens
        row.output_tokens += combination.output_tokens
        if (combination.cost_usd !== null) row.cost_usd = (row.cost_usd ?? 0) + combination.cost_usd
        for (const [bucket, calls] of combination.latency) (row.latency[bucket] as number) += calls
        for (const traceId of combination.traces) {
          const traceKey = `${key}\u0000${traceId}`
          if (!keys.has(traceKey)) keys.set(traceKey, { project_id: combination.project_id, dimension, hour: combination.hour, value, trace_id: traceId })
        }
      }
    }
    const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
    // Text as the spans' own columns store it: jsonb refuses U+0000 and lone surrogates.
    return toStorableJson(JSON.stringify({ rows: sorted, keys: [...keys.values()], traces: [...this.#traces.values()] }))
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

// A trace is new to a row when no span of it outside this batch lies in the row's hour with the
// row's value. The batch's spans are those this transaction inserted (their xmin is its id). Only a
// trace whose summary (upserted before, in this transaction) counts more spans than the batch
// brought has others, so only those are looked up.
const upsertText = `
  with batch as (select $1::jsonb as doc),
  b as (
    select b.* from batch, jsonb_to_recordset(batch.doc -> 'rows') as b(project_id text, dimension text, hour timestamptz, value text,
      spans integer, errors integer, input_tokens bigint, output_tokens bigint, cost_usd numeric, latency integer[])
  ),
  earlier as (
    select t.project_id, t.trace_id
    from batch, jsonb_to_recordset(batch.doc -> 'traces') as t(project_id text, trace_id text, spans integer)
    join trace_summaries s using (project_id, trace_id)
    where s.span_count > t.spans
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
        and s.xmin <> pg_current_xact_id()::xid
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
