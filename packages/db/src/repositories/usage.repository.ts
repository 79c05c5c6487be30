import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import { TRACEWELL_SERVICE } from './tracewell-calls.ts'
import { LATENCY_BUCKETS, latencyBucketMs } from './usage-histogram.ts'

// Usage of the query API (docs/api.md#usage), read from usage_rollups, the writer's hourly rows
// (usage-rollups.ts): at most one row per hour and group in the window, whatever the spans.

export type UsageGroup = 'model' | 'vendor' | 'service' | 'user'

export interface UsageQuery {
  projectId: string
  from: Date
  to: Date
  bucket: 'hour' | 'day'
  timeZone: string
  groupBy?: UsageGroup | undefined
  /** Also Tracewell's own calls (playground, experiments, judges: tracewell-calls.ts); left out by default. */
  includeTracewellCalls?: boolean | undefined
}

/**
 * Where Tracewell's own calls are rolled up in each dimension, to be taken back from it: the
 * 'service' row of `tracewell` for the project's totals and for users (those calls have none, so
 * they sit in the user '' row), the writer's 'tracewell.model' and 'tracewell.vendor' rows
 * (usage-deltas.ts) value by value. The service dimension just leaves its `tracewell` row out.
 */
export const ownCallRows: Record<'all' | 'user' | 'model' | 'vendor', { dimension: string; value: 'same' | 'service' }> = {
  all: { dimension: 'service', value: 'service' },
  user: { dimension: 'service', value: 'service' },
  model: { dimension: 'tracewell.model', value: 'same' },
  vendor: { dimension: 'tracewell.vendor', value: 'same' },
}

export interface UsageFigures {
  traces: number
  spans: number
  errors: number
  /** Sums of the counts reported; null when no span in the window or bucket reported one (unknown, as for cost). */
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyP50Ms: number | null
  latencyP95Ms: number | null
}

interface UsageRow {
  bucket_us: string
  grp: string
  traces: string
  spans: string
  errors: string
  input_tokens: string | null
  output_tokens: string | null
  cost: string | null
}

/**
 * The percentile of a merged histogram, as its bucket's geometric middle: within 9.1% of the exact
 * percentile of the same durations (one bucket is a factor 2^(1/4) wide).
 */
function percentileMs(histogram: readonly number[], q: number): number | null {
  const count = histogram.reduce((sum, n) => sum + n, 0)
  if (count === 0) return null
  // The rank percentile_cont interpolates at; the bucket holding it.
  const rank = q * (count - 1)
  let seen = 0
  for (let bucket = 0; bucket < histogram.length; bucket++) {
    seen += histogram[bucket] as number
    if (seen > rank) return latencyBucketMs(bucket)
  }
  return latencyBucketMs(histogram.length - 1)
}

function toFigures(row: UsageRow | undefined, histogram: readonly number[]): UsageFigures {
  return {
    traces: Number(row?.traces ?? 0),
    spans: Number(row?.spans ?? 0),
    errors: Number(row?.errors ?? 0),
    inputTokens: row?.input_tokens === null || row?.input_tokens === undefined ? null : Number(row.input_tokens),
    outputTokens: row?.output_tokens === null || row?.output_tokens === undefined ? null : Number(row.output_tokens),
    costUsd: row?.cost === null || row?.cost === undefined ? null : Number(row.cost),
    latencyP50Ms: percentileMs(histogram, 0.5),
    latencyP95Ms: percentileMs(histogram, 0.95),
  }
}

/**
 * Totals and a time series of the project's usage in [from, to), in buckets of the time zone.
 * Rollups are hours: from is taken back to the start of its UTC hour and to up to the end of
 * its own. A bucket gathers the UTC hours that start in it, which is exact for zones whose offset
 * is whole hours; in a zone with a half- or quarter-hour offset each hour falls wholly in the
 * bucket where it starts. A trace counts once per hour and group: a bucket of several hours sums
 * them, so a trace whose spans straddle an hour boundary counts in each of its hours.
 */
export async function usageOf(db: Executor, query: UsageQuery): Promise<{ totals: UsageFigures; series: Array<UsageFigures & { bucket: string; group: string | null }> }> {
  const dimension = query.groupBy ?? 'all'
  const from = new Date(Math.floor(query.from.getTime() / 3_600_000) * 3_600_000)
  const bucketOf = sql`(extract(epoch from date_trunc(${query.bucket}, hour at time zone ${query.timeZone}) at time zone ${query.timeZone}) * 1000000)::bigint::text`
  const inWindow = (rollup: string) => sql`project_id = ${query.projectId} and dimension = ${rollup} and hour >= ${from} and hour < ${query.to}`
  // Every read is a range of the primary key (project, dimension, hour, value): no plan depends on statistics.
  const rows = (of: UsageGroup | 'all') => {
    const stored = sql`
      select ${bucketOf} as bucket_us, value as grp, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency
      from usage_rollups where ${inWindow(of)}`
    if (query.includeTracewellCalls === true) return stored
    if (of === 'service') return sql`${stored} and value <> ${TRACEWELL_SERVICE}`
    // The application's usage: Tracewell's own calls taken back, row by row (figures negated).
    const own = ownCallRows[of]
    return sql`${stored}
      union all
      select ${bucketOf}, ${own.value === 'same' ? sql`value` : sql`''`}, -traces, -spans, -errors, -input_tokens, -output_tokens, -cost_usd,
        (select array_agg(-n order by i) from unnest(latency) with ordinality as l(n, i))
      from usage_rollups where ${inWindow(own.dimension)}${own.value === 'service' ? sql` and value = ${TRACEWELL_SERVICE}` : sql``}`
  }
  // A row that nets to nothing held only Tracewell's own calls.
  const notEmpty = query.includeTracewellCalls === true ? sql`` : sql`having (sum(spans), sum(traces)) <> (0, 0)`
  const figures = sql`sum(traces)::text as traces, sum(spans)::text as spans, sum(errors)::text as errors,
    sum(input_tokens)::text as input_tokens, sum(output_tokens)::text as output_tokens, sum(cost_usd)::text as cost`
  // Histograms are summed bucket by bucket, only the buckets that hold a call.
  const histogram = (grouping: ReturnType<typeof sql>) => sql<{ bucket_us: string; grp: string; i: string; n: string }>`
    select ${grouping}, u.i::text as i, sum(u.n)::text as n from (${rows(dimension)}) r, unnest(r.latency) with ordinality as u(n, i)
    where u.n <> 0 group by 1, 2, 3 having sum(u.n) > 0`
  const [totals, totalsHistogram, series, seriesHistogram] = await Promise.all([
    sql<UsageRow>`select '' as bucket_us, '' as grp, ${figures} from (${rows('all')}) r`.execute(db),
    sql<{ i: string; n: string }>`select u.i::text as i, sum(u.n)::text as n from (${rows('all')}) r, unnest(r.latency) with ordinality as u(n, i) where u.n <> 0 group by 1 having sum(u.n) > 0`.execute(db),
    sql<UsageRow>`select bucket_us, grp, ${figures} from (${rows(dimension)}) r group by 1, 2 ${notEmpty} order by bucket_us::bigint, grp`.execute(db),
    histogram(sql`r.bucket_us, r.grp`).execute(db),
  ])
  const merged = (entries: ReadonlyArray<{ i: string; n: string }>): number[] => {
    const counts = new Array<number>(LATENCY_BUCKETS).fill(0)
    for (const { i, n } of entries) counts[Number(i) - 1] = Number(n)
    return counts
  }
  const byGroup = new Map<string, Array<{ i: string; n: string }>>()
  for (const entry of seriesHistogram.rows) {
    const key = `${entry.bucket_us}\u0000${entry.grp}`
    const entries = byGroup.get(key)
    if (entries === undefined) byGroup.set(key, [entry])
    else entries.push(entry)
  }
  const totalsRow = totals.rows[0]
  const noRow = totalsRow === undefined || totalsRow.spans === null || (Number(totalsRow.spans) === 0 && Number(totalsRow.traces) === 0)
  return {
    totals: toFigures(noRow ? undefined : totalsRow, merged(totalsHistogram.rows)),
    series: series.rows.map((row) => ({
      bucket: new Date(Number(BigInt(row.bucket_us) / 1000n)).toISOString(),
      // The rollups' '' for a span without one, as the API has always answered it.
      group: query.groupBy === undefined || row.grp === '' ? null : row.grp,
      ...toFigures(row, merged(byGroup.get(`${row.bucket_us}\u0000${row.grp}`) ?? [])),
    })),
  }
}
