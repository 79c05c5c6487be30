import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { latencyBucketMs } from './usage-histogram.ts'
import { ownCallRows } from './usage.repository.ts'
import { TRACEWELL_SERVICE } from './tracewell-calls.ts'

// The metric engine's reads of the hourly rollups (metric-series.repository.ts): a row an hour and
// value, never a row a trace, whatever the window (issue 45: 300 ms p95 at ten million spans).
//
// - usage_rollups: sums of spans, tokens and cost (of the spans with the row's model, vendor,
//   service or user; of the whole traces for a session, prompt or tag), the traces that started
//   in the hour, those of them with an error, and their durations' histogram; a user's or a
//   session's row in an hour with a trace says the user or session was active in it.
// - score_rollups: each score name's count and sum of values an hour.
//
// Tracewell's own calls are taken back as usage takes them back (ownCallRows); the rows of the
// whole trace (session, prompt, tag) never counted them.

/** The metrics the rollups answer, and what each reads of a row. */
export type RollupMetric =
  | 'cost' | 'tokens' | 'input_tokens' | 'output_tokens' | 'traces' | 'spans'
  | 'error_rate' | 'latency_p50' | 'latency_p95' | 'latency_p99' | 'users' | 'sessions'

/** A usage_rollups dimension, as the metric engine names groups and filters. */
export type RollupDimension = 'model' | 'vendor' | 'service' | 'user' | 'session' | 'prompt' | 'tag'

export const ROLLUP_METRICS: ReadonlySet<string> = new Set<RollupMetric>([
  'cost', 'tokens', 'input_tokens', 'output_tokens', 'traces', 'spans', 'error_rate', 'latency_p50', 'latency_p95', 'latency_p99', 'users', 'sessions',
])
export const ROLLUP_DIMENSIONS: ReadonlySet<string> = new Set<RollupDimension>(['model', 'vendor', 'service', 'user', 'session', 'prompt', 'tag'])

/** The dimension whose values distinct users and sessions are. */
const MEMBERS: Partial<Record<RollupMetric, RollupDimension>> = { users: 'user', sessions: 'session' }

export interface RollupRead {
  projectId: string
  metric: RollupMetric
  /** The dimension grouped by or filtered on (at most one), or none: the project's totals. */
  dimension?: RollupDimension | undefined
  /** Only the rows of this value (a filter); model and vendor match in any case, as the trace list's. */
  value?: string | undefined
  grouped: boolean
  /** Whole UTC hours: the first bucket's start, the bucket width (a multiple of an hour), and the end. */
  startMs: number
  granularitySeconds: number
  to: Date
}

export interface RollupCell {
  bucket: number
  group: string | null
  value: number | null
}

/** Whether the rollups answer the metric grouped or filtered by this dimension. */
export function rollupsAnswer(metric: string, dimension: string | undefined, grouped: boolean): boolean {
  if (!ROLLUP_METRICS.has(metric)) return false
  if (dimension !== undefined && !ROLLUP_DIMENSIONS.has(dimension)) return false
  const members = MEMBERS[metric as RollupMetric]
  // Distinct users or sessions of another dimension's values would need their pairs kept.
  if (members !== undefined && dimension !== undefined && (grouped || dimension !== members)) return false
  return true
}

const bucketOf = (startMs: number, granularitySeconds: number) =>
  sql`floor((extract(epoch from hour) * 1000 - ${startMs}) / ${granularitySeconds * 1000})::int`

export async function rollupCells(db: Executor, read: RollupRead): Promise<RollupCell[]> {
  const dimension = read.dimension ?? 'all'
  const from = new Date(read.startMs)
  const inWindow = (of: string) => sql`project_id = ${read.projectId} and dimension = ${of} and hour >= ${from} and hour < ${read.to}`
  const caseless = dimension === 'model' || dimension === 'vendor'
  const valueIs = read.value === undefined ? sql`` : caseless ? sql` and lower(value) = lower(${read.value})` : sql` and value = ${read.value}`
  const bucket = bucketOf(read.startMs, read.granularitySeconds)
  const group = read.grouped ? sql`nullif(value, '')` : sql`null::text`

  const members = MEMBERS[read.metric]
  if (members !== undefined) {
    const { rows } = await sql<{ bucket: number; value: number }>`
      select ${bucket} as bucket, count(distinct value)::float8 as value
      from usage_rollups where ${inWindow(members)}${valueIs} and traces > 0 and value <> ''
      group by 1`.execute(db)
    return rows.map((row) => ({ bucket: row.bucket, group: null, value: row.value }))
  }

  // The rows read, and Tracewell's own calls' rows negated beside them (usage.repository.ts).
  const columns = sql`hour, value, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations`
  let rows: RawBuilder<unknown> = sql`select ${columns}, 1 as sign from usage_rollups where ${inWindow(dimension)}${valueIs}`
  if (dimension === 'service') rows = sql`${rows} and value <> ${TRACEWELL_SERVICE}`
  else if (dimension === 'all' || dimension === 'user' || dimension === 'model' || dimension === 'vendor') {
    const own = ownCallRows[dimension]
    const ownValue = own.value === 'same' ? sql`value` : sql`''::text`
    const ownRows = own.value === 'same' ? valueIs : sql` and value = ${TRACEWELL_SERVICE}`
    // Only the user '' row holds Tracewell's calls (they have no user).
    const ownApplies = dimension !== 'user' || read.value === undefined || read.value === ''
    if (ownApplies) {
      rows = sql`${rows} union all
        select hour, ${ownValue}, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations, -1
        from usage_rollups where ${inWindow(own.dimension)}${ownRows}`
    }
  }

  if (read.metric === 'latency_p50' || read.metric === 'latency_p95' || read.metric === 'latency_p99') {
    const q = { latency_p50: 0.5, latency_p95: 0.95, latency_p99: 0.99 }[read.metric]
    // Histograms summed bucket by bucket, only the buckets that hold a trace.
    const { rows: counts } = await sql<{ bucket: number; grp: string | null; i: number; n: number }>`
      select ${bucket} as bucket, ${group} as grp, array_lower(r.durations, 1) + d.o::int - 1 as i, sum(r.sign * d.n)::float8 as n
      from (${rows}) r, unnest(r.durations) with ordinality as d(n, o)
      where d.n <> 0 group by 1, 2, 3 having sum(r.sign * d.n) > 0`.execute(db)
    const histograms = new Map<string, RollupCell & { counts: Map<number, number> }>()
    for (const row of counts) {
      const key = `${row.bucket}\u0000${row.grp ?? ''}`
      let cell = histograms.get(key)
      if (cell === undefined) histograms.set(key, (cell = { bucket: row.bucket, group: row.grp, value: null, counts: new Map() }))
      cell.counts.set(row.i, row.n)
    }
    return [...histograms.values()].map(({ counts: histogram, ...cell }) => ({ ...cell, value: histogramPercentileMs(histogram, q) }))
  }

  const figures: Record<Exclude<RollupMetric, 'users' | 'sessions' | 'latency_p50' | 'latency_p95' | 'latency_p99'>, RawBuilder<unknown>> = {
    cost: sql`sum(sign * cost_usd)`,
    tokens: sql`coalesce(sum(sign * input_tokens), 0) + coalesce(sum(sign * output_tokens), 0)`,
    input_tokens: sql`coalesce(sum(sign * input_tokens), 0)`,
    output_tokens: sql`coalesce(sum(sign * output_tokens), 0)`,
    traces: sql`sum(sign * traces)`,
    spans: sql`sum(sign * spans)`,
    error_rate: sql`sum(sign * error_traces)::float8 / nullif(sum(sign * traces), 0)`,
  }
  const figure = figures[read.metric as keyof typeof figures]
  const { rows: cells } = await sql<{ bucket: number; grp: string | null; value: number | null }>`
    select ${bucket} as bucket, ${group} as grp, (${figure})::float8 as value
    from (${rows}) r group by 1, 2
    having sum(sign * traces) <> 0 or sum(sign * spans) <> 0`.execute(db)
  return cells.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

/** score_avg over whole hours, of one score or of each (grouped by name). */
export async function scoreRollupCells(
  db: Executor,
  read: { projectId: string; scoreName?: string | undefined; grouped: boolean; startMs: number; granularitySeconds: number; to: Date },
): Promise<RollupCell[]> {
  const { rows } = await sql<{ bucket: number; grp: string | null; value: number | null }>`
    select ${bucketOf(read.startMs, read.granularitySeconds)} as bucket, ${read.grouped ? sql`name` : sql`null::text`} as grp,
      sum(value_sum) / nullif(sum(scores), 0) as value
    from score_rollups
    where project_id = ${read.projectId} and hour >= ${new Date(read.startMs)} and hour < ${read.to}
      ${read.scoreName === undefined ? sql`` : sql`and name = ${read.scoreName}`}
    group by 1, 2 having sum(scores) > 0`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

/**
 * A percentile of durations counted by latency bucket, as percentile_cont computes it: between the
 * durations of the two ranks around q·(n−1), each read as its bucket's geometric middle. Each is
 * within 9.1 % of the duration it stands for (a bucket is a factor 2^(1/4) wide), so the result is
 * within 9.1 % of the exact percentile (durations from 58 min up share the last bucket). Null for none.
 */
export function histogramPercentileMs(histogram: ReadonlyMap<number, number>, q: number): number | null {
  const buckets = [...histogram.entries()].filter(([, n]) => n > 0).sort(([a], [b]) => a - b)
  const count = buckets.reduce((sum, [, n]) => sum + n, 0)
  if (count === 0) return null
  const rank = q * (count - 1)
  const at = (k: number): number => {
    let seen = 0
    for (const [bucket, n] of buckets) {
      seen += n
      if (seen > k) return latencyBucketMs(bucket)
    }
    return latencyBucketMs((buckets[buckets.length - 1] as [number, number])[0])
  }
  const low = at(Math.floor(rank))
  return low + (rank - Math.floor(rank)) * (at(Math.ceil(rank)) - low)
}
