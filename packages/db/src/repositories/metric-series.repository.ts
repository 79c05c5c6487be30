import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { traceFilterConditions } from './trace-search.repository.ts'
import { traceFilterOf, type TraceFilterParams } from './trace-filter-params.ts'
import { rollupCells, rollupsAnswer, scoreRollupCells, type RollupDimension, type RollupMetric } from './metric-rollups.ts'
import { shapeCells, shapesAnswer, type ShapeKey } from './trace-shape-cells.ts'
import { builtMemberDays, groupMemberCells, groupMembersAnswer } from './group-member-cells.ts'
import { notTracewellTrace } from './tracewell-calls.ts'
import { SCORE_DIMENSION_FILTERS, traceSummaryOf } from './score-dimensions.ts'
import { sessionMemberCells, sessionMembersAnswer } from './session-member-cells.ts'
import { byCodePoint, byUnits } from './code-point-order.ts'
import { onWholeHours, timeBucketOf, type BucketOf } from './metric-buckets.ts'

// The metric engine of monitors and dashboards (issue 45): one figure of a project over a window,
// or its series in buckets, read from what the writer already keeps, never from spans:
//
// - the hourly rollups (metric-rollups.ts) for every metric of traces and spans and for score_avg
//   over whole hours, by at most one of model, vendor, service, user, session, prompt or tag (as
//   group or filter): dashboards over days read a row per hour and value. Latency percentiles
//   are read from histograms there, within 9.1 % of the exact figure.
// - group_member_days (group-member-cells.ts) for users and sessions by model, vendor, service,
//   prompt, tag or user in points tiling the UTC day, over the days settled and built; the others from
//   the summaries: exact. By session, the 50 sessions kept found first, only their traces read
//   (session-member-cells.ts): exact.
// - the rows of the traces' shapes (trace-shape-cells.ts) for the sums and error rate of traces
//   under several filters, or a group and another filter, among model, vendor and service: exact.
// - trace_summaries otherwise (a window not on whole hours, as a monitor's last minutes, or any
//   other filter of the trace list), through their time index, with the trace list's own
//   conditions (traceFilterConditions): exact.
// - score_dimensions and judgment_dimensions (score-dimensions.ts) for score_avg by a group of the
//   trace or with filters of its dimensions (service, model, vendor, session, user), and for
//   judge_failure_rate so: a row a score or finished judgment with its trace's dimensions, no
//   summary looked up per row; scores (score_avg with any other filter, by name and time) and
//   evaluation_jobs (judge_failure_rate, by finish time) beside their traces' summaries otherwise.
// Tracewell's own calls are left out, as usage and the trace list leave them out.

export const MONITOR_METRICS = ['error_rate', 'latency_p50', 'latency_p95', 'latency_p99', 'cost', 'tokens', 'traces', 'score_avg', 'judge_failure_rate'] as const
export type MonitorMetric = (typeof MONITOR_METRICS)[number]
export const METRICS = [...MONITOR_METRICS, 'input_tokens', 'output_tokens', 'spans', 'sessions', 'users'] as const
export type Metric = (typeof METRICS)[number]

export const METRIC_GROUPS = ['model', 'vendor', 'service', 'user', 'session', 'prompt', 'tag', 'score_name'] as const
export type MetricGroup = (typeof METRIC_GROUPS)[number]

/** A series has at most this many points per group, and this many groups (the largest first). */
export const MAX_SERIES_POINTS = 1000
export const MAX_SERIES_GROUPS = 50

export interface MetricQuery {
  projectId: string
  metric: Metric
  /** The score score_avg averages; without it, a score_avg grouped by score_name averages each. */
  scoreName?: string | undefined
  /** GET /api/traces's query parameters (trace-filter-params.ts), without from and to. */
  filter?: TraceFilterParams | undefined
  from: Date
  to: Date
}

export interface MetricSeriesQuery extends MetricQuery {
  groupBy?: MetricGroup | undefined
  /** The width of a point; by default the smallest of GRANULARITIES giving at most 200 points. */
  granularitySeconds?: number | undefined
}

export interface MetricPoint {
  t: string
  value: number | null
}

export interface MetricSeries {
  series: Array<{ group: string | null; points: MetricPoint[] }>
}

const GRANULARITIES = [60, 300, 900, 3600, 6 * 3600, 86_400, 7 * 86_400]

/** Counts and sums are 0 over nothing; rates, averages and percentiles of nothing are unknown (no data). */
const COUNTED: ReadonlySet<Metric> = new Set(['cost', 'tokens', 'traces', 'input_tokens', 'output_tokens', 'spans', 'sessions', 'users'])

/**
 * Groups of counts and sums rank by the sum of their points' absolute values; those of rates,
 * averages and percentiles by their figure over the whole window (its absolute value), which a
 * read of the rollups computes from a row a user and day, without every group's points.
 */
const RANKED_BY_POINTS = COUNTED

/** Why a query cannot be answered (a caller's 400), or null. Names the field as the API calls it. */
export function metricQueryProblem(query: { metric: Metric; scoreName?: string | undefined; groupBy?: MetricGroup | undefined }): string | null {
  if (query.metric === 'score_avg' && query.scoreName === undefined && query.groupBy !== 'score_name') return 'scoreName: score_avg needs the score to average'
  if (query.metric !== 'score_avg' && query.scoreName !== undefined) return 'scoreName: only for metric score_avg'
  if (query.groupBy === 'score_name' && query.metric !== 'score_avg') return 'groupBy: score_name groups only metric score_avg'
  if (query.metric === 'judge_failure_rate' && query.groupBy === 'score_name') return 'groupBy: judge_failure_rate cannot be grouped by score_name'
  return null
}

/** The point width of a series over [from, to) when none is asked: the narrowest of GRANULARITIES giving at most 200 points. */
export function defaultGranularitySeconds(from: Date, to: Date): number {
  const spanSeconds = (to.getTime() - from.getTime()) / 1000
  return GRANULARITIES.find((g) => spanSeconds / g <= 200) ?? Math.ceil(spanSeconds / 200 / 86_400) * 86_400
}

function granularityOf(query: MetricSeriesQuery): number {
  return query.granularitySeconds ?? defaultGranularitySeconds(query.from, query.to)
}

/** The series of a metric in buckets of granularitySeconds from `from` (taken back to a whole bucket) up to `to`. */
export async function metricSeries(db: Executor, query: MetricSeriesQuery): Promise<MetricSeries> {
  const problem = metricQueryProblem(query)
  if (problem !== null) throw new RangeError(problem)
  if (query.to <= query.from) throw new RangeError('to: must be after from')
  const granularity = granularityOf(query)
  const startMs = Math.floor(query.from.getTime() / (granularity * 1000)) * granularity * 1000
  const buckets = Math.ceil((query.to.getTime() - startMs) / (granularity * 1000))
  if (buckets > MAX_SERIES_POINTS) throw new RangeError(`granularity: ${buckets} points from from to to, at most ${MAX_SERIES_POINTS}`)
  const window = { startMs, granularity, buckets }
  return { series: toSeries(query, await seriesCells(db, query, window), window) }
}

/** The cells of a series, from the first of the kept rows that answers it; the summaries otherwise. */
async function seriesCells(db: Executor, query: MetricSeriesQuery, window: Window): Promise<Cell[]> {
  const { startMs, granularity } = window
  const filtered = filterKeys(query.filter).length > 0
  if (sessionMembersAnswer(query.metric, query.groupBy, filtered, startMs, granularity, query.to)) {
    const read = { projectId: query.projectId, metric: query.metric as 'users' | 'sessions', startMs, granularitySeconds: granularity, to: query.to, maxGroups: MAX_SERIES_GROUPS }
    const cells = await sessionMemberCells(db, read)
    if (cells !== undefined) return cells
  }
  if (groupMembersAnswer(query.metric, query.groupBy, filtered, granularity)) return fromGroupMembers(db, query, window)
  if (rollupAnswers(query, startMs, granularity)) return fromRollups(db, query, window)
  return fromSummaries(db, query, window)
}

/** The metric over [from, to): null when there is nothing to measure (no trace for a rate, no score to average). */
export async function metricValue(db: Executor, query: MetricQuery): Promise<number | null> {
  const startMs = query.from.getTime()
  const granularity = (query.to.getTime() - startMs) / 1000
  if (!(granularity > 0)) throw new RangeError('to: must be after from')
  const problem = metricQueryProblem(query)
  if (problem !== null) throw new RangeError(problem)
  const window = { startMs, granularity, buckets: 1 }
  const cells = rollupAnswers(query, startMs, null) ? await fromRollups(db, query, window) : await fromSummaries(db, query, window)
  const cell = cells.find((c) => c.bucket === 0)
  return cell === undefined ? emptyValue(query.metric) : cell.value
}

interface Window {
  startMs: number
  granularity: number
  buckets: number
}

interface Cell {
  /** The point's bucket; null for a group's figure over the whole window (RANKED_BY_POINTS says when there is one). */
  bucket: number | null
  group: string | null
  value: number | null
}

const emptyValue = (metric: Metric): number | null => (COUNTED.has(metric) ? 0 : null)

const filterKeys = (filter: TraceFilterParams | undefined): string[] =>
  Object.entries(filter ?? {}).filter(([, value]) => value !== undefined).map(([key]) => key)

/**
 * Whether the rollups answer a metric with this grouping and filter (over whole hours): at most
 * one dimension of theirs, as group or filter (not both, unless the same); or the figures of traces
 * under filters and a group among model, vendor and service from the traces' shapes
 * (trace-shape-cells.ts). The rest (users or sessions of a model, scores and judgments of a model,
 * a percentile of two filters…) is read from the summaries.
 */
export function rollupsAnswerQuery(query: Pick<MetricSeriesQuery, 'metric' | 'groupBy' | 'filter'>): boolean {
  return dimensionRowsAnswer(query) || shapesAnswer(query.metric, filterKeys(query.filter), query.groupBy)
}

/** Whether the rows of one dimension (or the project's totals) answer: metric-rollups.ts. */
function dimensionRowsAnswer(query: Pick<MetricSeriesQuery, 'metric' | 'groupBy' | 'filter'>): boolean {
  const keys = filterKeys(query.filter)
  if (keys.length > 1) return false
  if (query.metric === 'score_avg') return keys.length === 0 && (query.groupBy === undefined || query.groupBy === 'score_name')
  const dimension = keys[0] ?? query.groupBy
  if (query.groupBy !== undefined && query.groupBy !== dimension) return false
  return rollupsAnswer(query.metric, dimension, query.groupBy !== undefined)
}

/** Whether the rollups answer the query over this window: whole UTC hours (onWholeHours). */
function rollupAnswers(query: MetricSeriesQuery, startMs: number, granularity: number | null): boolean {
  return rollupsAnswerQuery(query) && onWholeHours(startMs, granularity, query.to)
}

async function fromRollups(db: Executor, query: MetricSeriesQuery, window: Window): Promise<Cell[]> {
  const read = { projectId: query.projectId, startMs: window.startMs, granularitySeconds: window.granularity, to: query.to, grouped: query.groupBy !== undefined, maxGroups: MAX_SERIES_GROUPS }
  if (query.metric === 'score_avg') return scoreRollupCells(db, { ...read, scoreName: query.scoreName })
  if (!dimensionRowsAnswer(query)) {
    const { service, model, vendor } = query.filter ?? {}
    const cells = await shapeCells(db, {
      ...read, metric: query.metric, filter: { service, model, vendor }, groupBy: query.groupBy as ShapeKey | undefined, windowToo: !RANKED_BY_POINTS.has(query.metric),
    })
    return cells.filter((cell) => cell.bucket === null || (cell.bucket >= 0 && cell.bucket < window.buckets))
  }
  const key = filterKeys(query.filter)[0] as RollupDimension | undefined
  const cells = await rollupCells(db, {
    ...read,
    metric: query.metric as RollupMetric,
    dimension: key ?? (query.groupBy as RollupDimension | undefined),
    value: key === undefined ? undefined : String(query.filter?.[key as keyof TraceFilterParams]),
  })
  return cells.filter((cell) => cell.bucket === null || (cell.bucket >= 0 && cell.bucket < window.buckets))
}

/**
 * Users or sessions by a group: the built days' rows (group-member-cells.ts), the window's other
 * hours from the summaries, the groups kept chosen over both in one statement.
 */
async function fromGroupMembers(db: Executor, query: MetricSeriesQuery, window: Window): Promise<Cell[]> {
  const read = {
    projectId: query.projectId, metric: query.metric as 'users' | 'sessions', dimension: query.groupBy as string,
    startMs: window.startMs, granularitySeconds: window.granularity, to: query.to,
  }
  const { days, rest } = await builtMemberDays(db, read)
  const parts = [
    ...(days.length === 0 ? [] : [groupMemberCells(read, days)]),
    ...rest.map(([from, to]) => sql`select * from (${summaryCells({ ...query, to: new Date(to) }, window, new Date(from))}) s`),
  ]
  if (parts.length === 0) return []
  const { rows } = await sql<{ bucket: number; grp: string | null; value: number }>`${keptCells(sql.join(parts, sql` union all `), 'points')}`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

interface Source {
  from: RawBuilder<unknown>
  time: RawBuilder<unknown>
  where: RawBuilder<unknown>[]
  value: RawBuilder<unknown>
  /** A score's name, for the group score_name. */
  name: RawBuilder<unknown>
  /** The row's bucket and group, when the source computes them itself (before a trace's groups multiply its rows). */
  bucket?: RawBuilder<unknown>
  group?: RawBuilder<unknown>
}

/** A trace's row of trace_summaries as `t` beside a score's or judgment's row (null when not summarised): traceSummaryOf. */
const summaryOf = (alias: string) => sql`left join lateral (${traceSummaryOf(alias)}) t on true`

/** A table of rows with a copy of their trace's dimensions (score-dimensions.ts): its time and value, and its name column, if any. */
interface DimensionCopies {
  table: 'score_dimensions' | 'judgment_dimensions'
  time: string
  value: (alias: string) => RawBuilder<unknown>
  named: boolean
}

const SCORE_COPIES: DimensionCopies = { table: 'score_dimensions', time: 'created_at', value: (alias) => sql.ref(`${alias}.value`), named: true }
const JUDGMENT_COPIES: DimensionCopies = { table: 'judgment_dimensions', time: 'finished_at', value: (alias) => sql`${sql.ref(`${alias}.failed`)}::int`, named: false }

/**
 * The window's rows of score_dimensions (score_avg) or judgment_dimensions (judge_failure_rate) as
 * `s` (name, time `at`, value, bucket and group), those meeting `conditions` on `t`, the columns of its trace's
 * summary that SCORE_DIMENSION_FILTERS read: a row's own copy of its trace's dimensions, or, for
 * the few whose copy the fold has not made yet, the summary's. Where each score's trace was looked
 * up, 0.6–1.3 s for a month of bench:dashboards' project.
 */
function dimensionCopyRows(copies: DimensionCopies, query: MetricSeriesQuery, windowFrom: Date, bucketOf: BucketOf, conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  // Each row's bucket and group computed in the scan's own projection: a trace's models, say, by
  // unnest in the select list, where a lateral unnest a row (a function scan and its tuplestore
  // each) took as long as reading the rows. The conditions inside too: a select list with unnest
  // keeps every column it names, and only these few leave the scan.
  const columns = (rows: string) => sql.join([
    copies.named ? sql`${sql.ref(`${rows}.name`)} as name` : sql`null::text as name`, sql`${sql.ref(`${rows}.${copies.time}`)} as at`, sql`${copies.value(rows)} as value`,
    sql`${bucketOf(sql.ref(`${rows}.${copies.time}`))} as bucket`, sql`${groupValue(query.groupBy, 't', rows)} as grp`,
  ])
  const inWindow = (alias: string) => {
    const time = sql.ref(`${alias}.${copies.time}`)
    const where = [sql`${sql.ref(`${alias}.project_id`)} = ${query.projectId}`, sql`${time} >= ${windowFrom}`, sql`${time} < ${query.to}`]
    if (copies.named && query.scoreName !== undefined) where.push(sql`${sql.ref(`${alias}.name`)} = ${query.scoreName}`)
    return sql.join([...where, ...conditions], sql` and `)
  }
  return sql`(
    select ${columns('t')} from ${sql.table(copies.table)} t where t.summarised and ${inWindow('t')}
    union all
    select ${columns('sc')} from ${sql.table(copies.table)} sc ${summaryOf('sc')} where not sc.summarised and ${inWindow('sc')}
  ) s`
}

/** A source of the rows of dimensionCopyRows, averaging their values. */
const copiesSource = (from: RawBuilder<unknown>): Source =>
  ({ from, time: sql`s.at`, where: [sql`true`], value: sql`avg(s.value)`, name: sql`s.name`, bucket: sql`s.bucket`, group: sql`s.grp` })

function sourceOf(query: MetricSeriesQuery, windowFrom: Date, bucketOf: BucketOf): Source {
  const filter = filterKeys(query.filter).length === 0 ? [] : traceFilterConditions(traceFilterOf(query.projectId, query.filter ?? {}))
  // The trace list's conditions on t, a row of the window's scores or judgments with its trace's dimensions.
  const ofDimensions = filterKeys(query.filter).every((key) => SCORE_DIMENSION_FILTERS.has(key))
  if (query.metric === 'score_avg' && ofDimensions) return copiesSource(dimensionCopyRows(SCORE_COPIES, query, windowFrom, bucketOf, [notTracewellTrace, ...filter]))
  if (query.metric === 'judge_failure_rate' && ofDimensions) return copiesSource(dimensionCopyRows(JUDGMENT_COPIES, query, windowFrom, bucketOf, filter))
  if (query.metric === 'score_avg') {
    const where = [sql`sc.project_id = ${query.projectId}`, sql`sc.value is not null`, sql`sc.created_at >= ${windowFrom}`, sql`sc.created_at < ${query.to}`, notTracewellTrace, ...filter]
    if (query.scoreName !== undefined) where.push(sql`sc.name = ${query.scoreName}`)
    return { from: sql`scores sc ${summaryOf('sc')}`, time: sql`sc.created_at`, where, value: sql`avg(sc.value)`, name: sql`sc.name` }
  }
  if (query.metric === 'judge_failure_rate') {
    const where = [sql`ej.project_id = ${query.projectId}`, sql`ej.status in ('completed', 'failed')`, sql`ej.updated_at >= ${windowFrom}`, sql`ej.updated_at < ${query.to}`, ...filter]
    return { from: sql`evaluation_jobs ej ${summaryOf('ej')}`, time: sql`ej.updated_at`, where, value: sql`avg((ej.status = 'failed')::int)`, name: sql`null::text` }
  }
  const where = [sql`t.project_id = ${query.projectId}`, sql`t.start_time >= ${windowFrom}`, sql`t.start_time < ${query.to}`, notTracewellTrace, ...filter]
  return { from: sql`trace_summaries t`, time: sql`t.start_time`, where, value: traceAggregate(query.metric), name: sql`null::text` }
}

function traceAggregate(metric: Metric): RawBuilder<unknown> {
  switch (metric) {
    case 'error_rate':
      return sql`avg((t.error_count > 0)::int)`
    case 'latency_p50':
      return sql`percentile_cont(0.5) within group (order by t.duration_us) / 1000`
    case 'latency_p95':
      return sql`percentile_cont(0.95) within group (order by t.duration_us) / 1000`
    case 'latency_p99':
      return sql`percentile_cont(0.99) within group (order by t.duration_us) / 1000`
    case 'cost':
      return sql`sum(t.cost_usd)`
    case 'tokens':
      return sql`sum(coalesce(t.input_tokens, 0) + coalesce(t.output_tokens, 0))`
    case 'input_tokens':
      return sql`coalesce(sum(t.input_tokens), 0)`
    case 'output_tokens':
      return sql`coalesce(sum(t.output_tokens), 0)`
    case 'traces':
      return sql`count(*)`
    case 'spans':
      return sql`sum(t.span_count)`
    case 'sessions':
      return sql`count(distinct t.session_id)`
    case 'users':
      return sql`count(distinct t.user_id)`
    default:
      throw new RangeError(`metric: ${metric} is not a metric of traces`)
  }
}

/** The column of a trace (or, by score_name, of its score) a group reads: an array of values (a trace in each) or one value. */
function groupColumn(groupBy: MetricGroup): { array: string } | { value: string } | 'score_name' {
  switch (groupBy) {
    case 'model':
      return { array: 'models' }
    case 'vendor':
      return { array: 'vendors' }
    case 'service':
      return { array: 'services' }
    case 'prompt':
      return { array: 'prompts' }
    case 'tag':
      return { array: 'tags' }
    case 'user':
      return { value: 'user_id' }
    case 'session':
      return { value: 'session_id' }
    case 'score_name':
      return 'score_name'
  }
}

/** A trace's values of an array column, or one null for none (so that a trace without any counts in group null). */
const valuesOrNull = (column: RawBuilder<unknown>) => sql`unnest(case when coalesce(cardinality(${column}), 0) = 0 then array[null::text] else ${column} end)`

/** A row's group as an expression of its select list (`alias`, its trace's columns; `scores`, the score's): a set-returning unnest for an array column. */
function groupValue(groupBy: MetricGroup | undefined, alias: string, scores: string): RawBuilder<unknown> {
  if (groupBy === undefined) return sql`null::text`
  const column = groupColumn(groupBy)
  if (column === 'score_name') return sql.ref(`${scores}.name`)
  return 'array' in column ? valuesOrNull(sql.ref(`${alias}.${column.array}`)) : sql.ref(`${alias}.${column.value}`)
}

/** The group of a row of `t`: a trace in each of its models, vendors, services, prompts or tags (null for one without), by a lateral join. */
function groupOf(groupBy: MetricGroup | undefined, source: Source): { join: RawBuilder<unknown>; value: RawBuilder<unknown> } {
  if (groupBy === undefined) return { join: sql``, value: sql`null::text` }
  const column = groupColumn(groupBy)
  if (column === 'score_name') return { join: sql``, value: source.name }
  if ('value' in column) return { join: sql``, value: sql.ref(`t.${column.value}`) }
  return { join: sql`cross join lateral ${valuesOrNull(sql.ref(`t.${column.array}`))} as g(value)`, value: sql`g.value` }
}

async function fromSummaries(db: Executor, query: MetricSeriesQuery, window: Window): Promise<Cell[]> {
  const byWindow = query.groupBy !== undefined && !RANKED_BY_POINTS.has(query.metric)
  if (byWindow && MANY_GROUPS.has(query.groupBy as MetricGroup)) {
    const source = sourceOf(query, new Date(window.startMs), windowBucketOf(window))
    if (source.bucket !== undefined && source.group !== undefined) return keptGroupCells(db, { ...source, bucket: source.bucket, group: source.group })
  }
  const cells = summaryCells(query, window, new Date(window.startMs))
  const { rows } = await sql<{ bucket: number | null; grp: string | null; value: number | null }>`${byWindow ? keptCells(cells, 'window') : cells}`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

const windowBucketOf = (window: Window): BucketOf => timeBucketOf(window.startMs, window.granularity)

/**
 * The cells (bucket, grp, value) of the traces (scores, judgments) from `from` to query.to; grouped
 * by a rate's or an average's groups, each group's figure over the window too (bucket null).
 */
function summaryCells(query: MetricSeriesQuery, window: Window, from: Date): RawBuilder<unknown> {
  const bucketOf = windowBucketOf(window)
  const source = sourceOf(query, from, bucketOf)
  const group = source.group === undefined ? groupOf(query.groupBy, source) : { join: sql``, value: source.group }
  // Groups ranked by their figure over the window: that figure too (bucket null), from the same rows.
  const byWindow = query.groupBy !== undefined && !RANKED_BY_POINTS.has(query.metric)
  return sql`
    select ${source.bucket ?? bucketOf(source.time)} as bucket, ${group.value} as grp, (${source.value})::float8 as value
    from ${source.from} ${group.join}
    where ${sql.join(source.where, sql` and `)}
    group by ${byWindow ? sql`grouping sets ((1, 2), (2))` : sql`1, 2`}`
}

/**
 * The cells of the groups toSeries keeps, chosen here in its order (collate "C" is code point
 * order, none last): 50 groups' points sent, not 42,000 sessions'. Ranked by their figure over the
 * window (the cells of bucket null), or by the sum of their points' absolute values.
 */
function keptCells(cells: RawBuilder<unknown>, rankedBy: 'window' | 'points'): RawBuilder<unknown> {
  const ranked = rankedBy === 'window'
    ? sql`select grp from cells where bucket is null order by abs(coalesce(value, 0)) desc, grp is null, grp collate "C" limit ${MAX_SERIES_GROUPS}`
    : sql`select grp from cells group by grp order by sum(abs(coalesce(value, 0))) desc, grp is null, grp collate "C" limit ${MAX_SERIES_GROUPS}`
  return sql`
    with cells as (${cells}),
      kept as (${ranked})
    select bucket, grp, value from cells
    where grp in (select grp from kept where grp is not null) or (grp is null and exists (select 1 from kept where grp is null))`
}

/**
 * Groups of one value a trace, tens of thousands a month (a session has one scored trace): ranked
 * before their points are grouped (keptGroupCells). The few of the others are grouped with their
 * points at once: ranked first, a model's rows (two a score) were kept and grouped twice, slower
 * (docs/benchmarks.md).
 */
const MANY_GROUPS: ReadonlySet<MetricGroup> = new Set(['user', 'session'])

/**
 * The cells of a source that computes each row's bucket and group itself (dimensionCopyRows),
 * grouped and ranked by the window's figure: its rows read once into a narrow CTE, each group's
 * figure over the window from them, then the points of the groups kept only. Grouping sets over
 * every group's points (81,000 cells for a month's scored sessions, sorted, kept, filtered) were
 * two thirds of the statement.
 */
async function keptGroupCells(db: Executor, source: Source & Required<Pick<Source, 'bucket' | 'group'>>): Promise<Cell[]> {
  // Ranked, the groups toSeries keeps are chosen here, in its order (collate "C" is code point order, none last).
  const { rows } = await sql<{ bucket: number | null; grp: string | null; value: number | null }>`
    with s as materialized (select ${source.bucket} as bucket, ${source.group} as grp, s.value from ${source.from} where ${sql.join(source.where, sql` and `)}),
      kept as (
        select grp, (${source.value})::float8 as value from s group by grp
        order by abs(coalesce((${source.value})::float8, 0)) desc, grp is null, grp collate "C" limit ${MAX_SERIES_GROUPS}
      )
    select s.bucket, s.grp, (${source.value})::float8 as value from s
    where s.grp in (select grp from kept where grp is not null) or (s.grp is null and exists (select 1 from kept where grp is null))
    group by 1, 2
    union all
    select null, grp, value from kept`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

function toSeries(query: MetricSeriesQuery, cells: Cell[], window: Window): MetricSeries['series'] {
  const groups = new Map<string | null, Map<number, number | null>>()
  const windowFigures = new Map<string | null, number | null>()
  for (const cell of cells) {
    if (cell.bucket === null) {
      windowFigures.set(cell.group, cell.value)
      continue
    }
    const points = groups.get(cell.group) ?? new Map<number, number | null>()
    points.set(cell.bucket, cell.value)
    groups.set(cell.group, points)
  }
  if (groups.size === 0 && query.groupBy === undefined) groups.set(null, new Map())
  const byPoints = RANKED_BY_POINTS.has(query.metric) || query.groupBy === undefined
  // Added in bucket order, not the rows' order: equal totals of decimals then part the same way
  // (by a last bit, if at all) whichever plan read the rows.
  const total = (group: string | null, points: Map<number, number | null>) => byPoints
    ? [...points.keys()].sort((a, b) => a - b).reduce<number>((sum, bucket) => sum + Math.abs(points.get(bucket) ?? 0), 0)
    : Math.abs(windowFigures.get(group) ?? 0)
  // UTF-16 units compare in code point order but for the surrogates (code points from U+10000),
  // which order after U+E000–U+FFFF: compared unit by unit only when a group holds one of those.
  const tieOrder = [...groups.keys()].some((group) => group !== null && /[\ud800-\uffff]/.test(group)) ? byCodePoint : byUnits
  // Each group's total once, not at every comparison (20,000 sessions' groups from the summaries).
  const kept = [...groups.entries()]
    .map(([group, points]) => ({ group, points, total: total(group, points) }))
    .sort((a, b) => b.total - a.total || tieOrder(a.group, b.group))
    .slice(0, MAX_SERIES_GROUPS)
  return kept.map(({ group, points }) => ({
    group,
    points: Array.from({ length: window.buckets }, (_, bucket) => ({
      t: new Date(window.startMs + bucket * window.granularity * 1000).toISOString(),
      value: points.has(bucket) ? (points.get(bucket) as number | null) : emptyValue(query.metric),
    })),
  }))
}
