import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { bucketOf } from './metric-buckets.ts'
import { ERROR_RATE, SUMS, type RollupCell } from './metric-rollups.ts'
import { TRACE_SHAPE_DIMENSION } from './trace-shapes.ts'

// The metric engine's reads of the traces' shape rows (migration 2026-12-06T1620): the figures of
// whole traces filtered and grouped by any of model, vendor and service together (two filters, or
// a group and a filter of another of them), which the summaries answered a row a trace. Each shape
// row is matched as the trace list matches a trace (traceFilterConditions): a service exactly, a
// model (asked for or answered) and a vendor in any case; grouped, a trace counts under each of its
// models, vendors or services, or under none. Exact, as the summaries were: sums and the error rate
// only (a percentile from histograms would not be the summaries' exact figure).

export type ShapeKey = 'model' | 'vendor' | 'service'

const SHAPE_KEYS: ReadonlySet<string> = new Set<ShapeKey>(['model', 'vendor', 'service'])
const SHAPE_METRICS: ReadonlySet<string> = new Set(['cost', 'tokens', 'input_tokens', 'output_tokens', 'traces', 'spans', 'error_rate'])

/** Where each key's values are in a shape's JSON array: models (and response models), vendors, services. */
const GROUP_AT: Record<ShapeKey, number> = { model: 0, vendor: 2, service: 3 }

/** Whether the shape rows answer a metric with these filters (keys of the trace list's) and this grouping. */
export function shapesAnswer(metric: string, filterKeys: readonly string[], groupBy: string | undefined): boolean {
  return SHAPE_METRICS.has(metric) && filterKeys.every((key) => SHAPE_KEYS.has(key)) && (groupBy === undefined || SHAPE_KEYS.has(groupBy))
}

export interface ShapeRead {
  projectId: string
  metric: string
  filter: Partial<Record<ShapeKey, string | undefined>>
  groupBy?: ShapeKey | undefined
  /** Each group's figure over the whole window too (bucket null), by which a rate's groups rank. */
  windowToo: boolean
  /** Whole UTC hours: the first bucket's start, the bucket width (a multiple of an hour), and the end. */
  startMs: number
  granularitySeconds: number
  to: Date
}

/**
 * The cells of a metric from the shape rows of [startMs, to): one statement over a few rows an
 * hour. Each distinct shape of the window is parsed and matched once (20 a month in the bench,
 * against 14,000 rows: parsed row by row, the JSON was most of the statement's time).
 */
export async function shapeCells(db: Executor, read: ShapeRead): Promise<RollupCell[]> {
  const figure = read.metric === 'error_rate' ? ERROR_RATE : SUMS[read.metric as keyof typeof SUMS]
  if (figure === undefined) throw new RangeError(`metric: ${read.metric} is not read from the traces' shapes`)
  const group = read.groupBy === undefined
    ? { join: sql``, value: sql`null::text` }
    : {
        join: sql`cross join lateral jsonb_array_elements_text(case when jsonb_array_length(s.shape -> ${GROUP_AT[read.groupBy]}::int) = 0
          then '[null]'::jsonb else s.shape -> ${GROUP_AT[read.groupBy]}::int end) as g(value)`,
        value: sql`g.value`,
      }
  const grouping = read.groupBy !== undefined && read.windowToo ? sql`grouping sets ((1, 2), (2))` : sql`1, 2`
  // Rows a trace moved out of (no trace left) are left out: their sums of nothing would make a null sum 0.
  const { rows } = await sql<{ bucket: number | null; grp: string | null; value: number | null }>`
    with r as (
      select hour, value, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, 1 as sign
      from usage_rollups
      where project_id = ${read.projectId} and dimension = ${TRACE_SHAPE_DIMENSION} and hour >= ${new Date(read.startMs)} and hour < ${read.to} and traces <> 0
    ),
    s as (select value, value::jsonb as shape from r group by value),
    matched as (select s.value, ${group.value} as grp from s ${group.join} where ${sql.join(matching(read.filter), sql` and `)})
    select ${bucketOf(read.startMs, read.granularitySeconds)} as bucket, m.grp, (${figure})::float8 as value
    from r join matched m using (value)
    group by ${grouping}
    having sum(traces) <> 0`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

/** The shape's conditions of the filter, as traceFilterConditions words them of a trace (an empty value filters nothing there either). */
function matching(filter: ShapeRead['filter']): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [sql`true`]
  const anyOf = (list: RawBuilder<unknown>, matches: (element: RawBuilder<unknown>) => RawBuilder<unknown>) =>
    sql`exists (select 1 from jsonb_array_elements_text(${list}) as e(value) where ${matches(sql`e.value`)})`
  if (filter.service) conditions.push(anyOf(sql`s.shape -> 3`, (e) => sql`${e} = ${filter.service}`))
  if (filter.model) conditions.push(anyOf(sql`(s.shape -> 0) || (s.shape -> 1)`, (e) => sql`lower(${e}) = lower(${filter.model})`))
  if (filter.vendor) conditions.push(anyOf(sql`s.shape -> 2`, (e) => sql`lower(${e}) = lower(${filter.vendor})`))
  return conditions
}
