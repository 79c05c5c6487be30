import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { LATENCY_BUCKETS, latencyBucketMs } from './usage-histogram.ts'
import { bucketOf, DAY_MS, HOUR_MS } from './metric-buckets.ts'
import { ACTIVE_DAY_DIMENSIONS } from './usage-rollup-figures.ts'
import { ownCallRows } from './usage.repository.ts'
import { openSessionRows, rankedSessions, sessionHours, sessionsRank, sessionsSettledUntil, type SessionWindow } from './session-ranking.ts'
import { TRACEWELL_SERVICE } from './tracewell-calls.ts'
import { userWeekRows, windowParts } from './user-window-parts.ts'
import { sessionCountCells, spanningSessionRows } from './session-count-cells.ts'
import { userHourCells, usersByHoursOfDay } from './user-hour-cells.ts'

// The metric engine's reads of the hourly rollups (metric-series.repository.ts): a row an hour and
// value, never a row a trace, whatever the window (issue 45: 300 ms p95 at ten million spans).
//
// - usage_rollups: sums of spans, tokens and cost (of the spans with the row's model, vendor,
//   service or user; of the whole traces for a session, prompt or tag), the traces that started
//   in the hour, those of them with an error, and their durations' histogram; a user's or a
//   session's row in an hour with a trace says the user or session was active in it, and its row
//   of the day (ACTIVE_DAY_DIMENSIONS) that it was active on the day.
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
const MEMBERS: Partial<Record<RollupMetric, 'user' | 'session'>> = { users: 'user', sessions: 'session' }

export interface RollupRead {
  projectId: string
  metric: RollupMetric
  /** The dimension grouped by or filtered on (at most one), or none: the project's totals. */
  dimension?: RollupDimension | undefined
  /** Only the rows of this value (a filter); model and vendor match in any case, as the trace list's. */
  value?: string | undefined
  grouped: boolean
  /** Grouped, the groups kept (the largest first, as the metric engine orders them). */
  maxGroups: number
  /** Whole UTC hours: the first bucket's start, the bucket width (a multiple of an hour), and the end. */
  startMs: number
  granularitySeconds: number
  to: Date
}

export interface RollupCell {
  /** The point's bucket; null for a group's figure over the whole window, by which rates, percentiles and averages rank. */
  bucket: number | null
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

const PERCENTILES: Partial<Record<RollupMetric, number>> = { latency_p50: 0.5, latency_p95: 0.95, latency_p99: 0.99 }

/** latencyBucketMs of every bucket as a float8[] literal: the database reads the very doubles JavaScript computes. */
const BUCKET_MS = `{${Array.from({ length: LATENCY_BUCKETS }, (_, bucket) => latencyBucketMs(bucket)).join(',')}}`

/**
 * The cells of a metric: one statement, whose points are computed where the rows are. Grouped, it
 * keeps the read.maxGroups groups the metric engine keeps, so that a grouping by user or session
 * sends 50 groups' points, not every group's: of a sum, the largest sum of absolute values over the
 * points; of a rate or a percentile, the largest absolute figure over the window (sent beside the
 * points, bucket null).
 */
export async function rollupCells(db: Executor, read: RollupRead): Promise<RollupCell[]> {
  const members = MEMBERS[read.metric]
  if (members !== undefined) return memberCells(db, read, members)
  const q = PERCENTILES[read.metric]
  const figure = SUMS[read.metric as keyof typeof SUMS]
  const sessions = bySessionRows(read) ? await sessionWindow(db, read) : undefined
  // The kept users' points read by each user's own rows (keptUserRows), not the window's every hour.
  const keptUsers = read.dimension === 'user' && read.value === undefined
  /** Where the kept groups' points are read from: their own rows, or the window's hours. */
  const keptOnly: Omit<CellsOptions, 'windowToo'> | undefined = sessions ? { keptSessions: sessions } : keptUsers ? { keptUsers } : undefined
  // Ties in code point order, the group of none ('') last: the order toSeries sorts in.
  const order = sql`value = '', value collate "C" limit ${read.maxGroups}`
  // The rows of the groups kept, as an array: looked up in the index hour by hour (a subquery's
  // `in` filtered every group's rows of the hour).
  const ofKept = sql` and value = any(array(select value from kept))`
  const isKept = sql`value in (select value from kept)`
  let query: RawBuilder<unknown>
  if (!read.grouped) query = sql`select bucket, null::text as grp, figure as value from (${q === undefined ? figureCells(read) : percentileCells(read, q)}) c`
  else if (figure !== undefined) {
    // A sum's points are sums of figures that are never negative (own calls are taken back from
    // the rows that hold them): a group's points' absolute values add up to its sum over the
    // window, read without points; then the points of the groups kept only.
    const window = { ...read, granularitySeconds: windowSeconds(read) }
    const kept = sessions
      ? rankedSessions(sessions, (only) => figureCells(window, only), () => figureCells(window, undefined, { openSessions: sessions }))
      : sql`select value from (${signedRows(read, sql``, { wholeDays: true })}) r group by value having sum(sign * traces) <> 0 or sum(sign * spans) <> 0
        order by abs(coalesce((${figure})::float8, 0)) desc, ${order}`
    const points = keptOnly ? figureCells(read, undefined, keptOnly) : figureCells(read, ofKept)
    query = sql`with kept as (${kept})
      select bucket, nullif(value, '') as grp, figure as value from (${points}) c where ${isKept}`
  } else if (!MANY_VALUES.has(read.dimension ?? 'all')) {
    // A rate's or a percentile's groups ranked by their figure over the window: of a few values,
    // computed with their points from the same rows (bucket null).
    query = sql`with cells as (${q === undefined ? figureCells(read, undefined, { windowToo: true }) : percentileCells(read, q, undefined, { windowToo: true })}),
        kept as (select value from cells where bucket is null order by abs(coalesce(figure, 0)) desc, ${order})
      select bucket, nullif(value, '') as grp, figure as value from cells where ${isKept}`
  } else {
    // Of a user or session, first ranked (a bucket as wide as the window, read from a row a user
    // and week or day where those fit: userWindowRows); then the points of the kept only.
    const cellsOf = (of: RollupRead, only?: RawBuilder<unknown>, options: Omit<CellsOptions, 'windowToo'> = {}) =>
      q === undefined ? figureCells(of, only, options) : percentileCells(of, q, only, options)
    const window = { ...read, granularitySeconds: windowSeconds(read) }
    const kept = sessions
      ? rankedSessions(sessions, (only) => cellsOf(window, only), () => cellsOf(window, undefined, { openSessions: sessions }))
      : sql`select value, figure from (${cellsOf(window, undefined, { wholeDays: true })}) w order by abs(coalesce(figure, 0)) desc, ${order}`
    query = sql`with kept as (${kept})
      select bucket, nullif(value, '') as grp, figure as value from (${keptOnly ? cellsOf(read, undefined, keptOnly) : cellsOf(read, ofKept)}) c where ${isKept}
      union all
      select null, nullif(value, ''), figure from kept`
  }
  const { rows } = await (query as RawBuilder<RollupRow>).execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: row.grp, value: row.value }))
}

/** A bucket as wide as the window: each group's figure over it. */
const windowSeconds = (read: RollupRead) => (read.to.getTime() - read.startMs) / 1000

/** Grouped by session, not filtered: ranked from the sessions' rows (session-ranking.ts). */
const bySessionRows = (read: RollupRead) => read.dimension === 'session' && read.value === undefined && sessionsRank(read.metric)

const sessionWindow = async (db: Executor, read: RollupRead): Promise<SessionWindow> =>
  ({ projectId: read.projectId, metric: read.metric, from: new Date(read.startMs), to: read.to, maxGroups: read.maxGroups, settledUntil: await sessionsSettledUntil(db) })

interface RollupRow {
  bucket: number | null
  grp: string | null
  value: number | null
}

/**
 * The rows read, and Tracewell's own calls' rows negated beside them (usage.repository.ts):
 * hour, value and figures, with `sign`. With `wholeDays`, a user's figures over the whole window
 * (one bucket) are read from their rows of whole weeks and days where those fit (userWindowRows).
 */
function signedRows(read: RollupRead, only: RawBuilder<unknown> = sql``, { wholeDays = false, keptSessions, openSessions, keptUsers = false }: Omit<CellsOptions, 'windowToo'> = {}): RawBuilder<unknown> {
  const dimension = read.dimension ?? 'all'
  const from = new Date(read.startMs)
  const inWindow = (of: string) => sql`project_id = ${read.projectId} and dimension = ${of} and hour >= ${from} and hour < ${read.to}`
  const valueIs = sql`${valueCondition(read)}${only}`
  const columns = sql`hour, value, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations`
  if (dimension === 'service') return sql`select ${columns}, 1 as sign from usage_rollups where ${inWindow(dimension)}${valueIs} and value <> ${TRACEWELL_SERVICE}`
  if (keptSessions) return keptSessionRows(keptSessions, sql`${columns}, 1 as sign`)
  if (openSessions) return openSessionRows(openSessions, sql`${columns}, 1 as sign`)
  let rows = wholeDays && dimension === 'user' ? userWindowRows(read, valueIs)
    : keptUsers && dimension === 'user' ? keptUserRows(read, sql`${columns}, 1 as sign`)
    : rowsIn(read.projectId, dimension, [from, read.to], sql`${columns}, 1 as sign`, valueIs)
  if (dimension === 'all' || dimension === 'user' || dimension === 'model' || dimension === 'vendor') {
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
  return rows
}

/**
 * A user's rows over the whole window, read from the week, day and hour rows user-window-parts.ts
 * plans (some taken back, sign -1), each with the window's start as its `hour`: one bucket.
 */
function userWindowRows(read: RollupRead, condition: RawBuilder<unknown>): RawBuilder<unknown> {
  const from = new Date(read.startMs)
  const parts = windowParts(read.startMs, Math.ceil(read.to.getTime() / HOUR_MS) * HOUR_MS, Date.now())
  const columns = (sign: 1 | -1) => sql`${from}::timestamptz as hour, value, traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations, ${sql.lit(sign)} as sign`
  const rows = parts.map((part) => {
    const range: [Date, Date] = [new Date(part.from), new Date(part.to)]
    if (part.level === 'week') return userWeekRows(read.projectId, range, columns(part.sign), condition)
    return rowsIn(read.projectId, part.level === 'day' ? ACTIVE_DAY_DIMENSIONS.user : 'user', range, columns(part.sign), condition)
  })
  // A window of no hour (to at its start) reads nothing.
  return rows.length === 0 ? rowsIn(read.projectId, 'user', [read.to, read.to], columns(1), condition) : sql.join(rows, sql` union all `)
}

/** The dimensions of a row a value and hour (or day) with a trace: as many rows as traces, nearly. */
const MANY_VALUES: ReadonlySet<string> = new Set(['user', 'session', ...Object.values(ACTIVE_DAY_DIMENSIONS)])

/**
 * The rows of a dimension in [from, to) meeting `condition`. Those of a dimension of many values
 * (MANY_VALUES) are looked up hour by hour (day by day for the rows of the day) through the
 * primary key's shape, whatever the statistics believe (autovacuum may be off): a range over them
 * was planned as a sequential scan of every day partition (370 MB for the 58,000 session rows of a
 * week in bench:dashboards). The lookups read the covering index of migration 2026-12-06T0720.
 */
function rowsIn(projectId: string, dimension: string, [from, to]: [Date, Date], columns: RawBuilder<unknown>, condition: RawBuilder<unknown>): RawBuilder<unknown> {
  if (!MANY_VALUES.has(dimension)) {
    return sql`select ${columns} from usage_rollups where project_id = ${projectId} and dimension = ${dimension} and hour >= ${from} and hour < ${to}${condition}`
  }
  const step = dimension.endsWith('.day') ? '1 day' : '1 hour'
  return sql`
    select r.* from generate_series(${from}::timestamptz, ${to}::timestamptz, ${step}::interval) as h(at)
    cross join lateral (
      select ${columns} from usage_rollups where project_id = ${projectId} and dimension = ${dimension} and hour = h.at${condition} offset 0
    ) as r
    where h.at < ${to}`
}

/**
 * The hourly rows of the sessions kept (the CTE `kept`), each looked up by key in the hours its
 * row in session_figures bounds (a session lies in an hour or two) and those after the settled
 * ones (sessionHours): the window's every hour is read for '' only. Where every hour was read for
 * all 50 (an index probe a session and hour), 140 of a widget's 185 ms at ten million spans.
 */
function keptSessionRows(window: SessionWindow, columns: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    select r.* from kept k
    left join session_figures f on f.project_id = ${window.projectId} and f.session_id = k.value collate "C"
    cross join lateral (${sessionHours(window, sql`k.value`, 'f')}) as h(at)
    cross join lateral (
      select ${columns} from usage_rollups where project_id = ${window.projectId} and dimension = 'session' and hour = h.at and value = k.value offset 0
    ) as r
    where h.at < ${window.to}`
}

/**
 * The hourly rows of the users kept (the CTE `kept`) in the window, each user's read as one range
 * of the index by user and hour (migration 2026-12-06T1610). Where every hour of the window was
 * probed for the 50 (`value = any(…)`), 108,000 buffers and most of a 30-day widget's time.
 */
function keptUserRows(read: RollupRead, columns: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    select r.* from kept k
    cross join lateral (
      select ${columns} from usage_rollups
      where project_id = ${read.projectId} and dimension = 'user' and value = k.value and hour >= ${new Date(read.startMs)} and hour < ${read.to} offset 0
    ) as r`
}

/** The filter on the read's value; model and vendor match in any case, as the trace list's. */
function valueCondition(read: RollupRead): RawBuilder<unknown> {
  if (read.value === undefined) return sql``
  return read.dimension === 'model' || read.dimension === 'vendor' ? sql` and lower(value) = lower(${read.value})` : sql` and value = ${read.value}`
}

/** The sums' figures, as aggregates of signed rows. */
export const SUMS = {
  cost: sql`sum(sign * cost_usd)`,
  tokens: sql`coalesce(sum(sign * input_tokens), 0) + coalesce(sum(sign * output_tokens), 0)`,
  input_tokens: sql`coalesce(sum(sign * input_tokens), 0)`,
  output_tokens: sql`coalesce(sum(sign * output_tokens), 0)`,
  traces: sql`sum(sign * traces)`,
  spans: sql`sum(sign * spans)`,
} satisfies Partial<Record<RollupMetric, RawBuilder<unknown>>>

export const ERROR_RATE = sql`sum(sign * error_traces)::float8 / nullif(sum(sign * traces), 0)`

/**
 * How cells are read: `wholeDays` as signedRows reads; `windowToo`, each value's figure over the
 * window too (bucket null); `keptSessions`, the rows of the sessions of the CTE `kept` only
 * (keptSessionRows); `openSessions`, those of rankedSessions' open sessions (openSessionRows);
 * `keptUsers`, the rows of the users of the CTE `kept` only (keptUserRows).
 */
interface CellsOptions {
  wholeDays?: boolean
  keptSessions?: SessionWindow | undefined
  openSessions?: SessionWindow | undefined
  keptUsers?: boolean
  windowToo?: boolean
}

/**
 * bucket, value ('' for every row when not grouped) and figure of the sums and the error rate, of
 * the rows meeting `only`.
 */
function figureCells(read: RollupRead, only?: RawBuilder<unknown>, { windowToo = false, ...source }: CellsOptions = {}): RawBuilder<unknown> {
  const figure = read.metric === 'error_rate' ? ERROR_RATE : SUMS[read.metric as keyof typeof SUMS]
  return sql`
    select ${bucketOf(read.startMs, read.granularitySeconds)} as bucket, ${read.grouped ? sql`value` : sql`''::text`} as value, (${figure})::float8 as figure
    from (${signedRows(read, only, source)}) r group by ${windowToo ? sql`grouping sets ((1, 2), (2))` : sql`1, 2`}
    having sum(sign * traces) <> 0 or sum(sign * spans) <> 0`
}

/**
 * A percentile of each bucket's and value's histogram (summed bucket by bucket, only the buckets
 * that hold a trace), computed as histogramPercentileMs computes it, operation for operation on
 * the same doubles: the figure is the one JavaScript would give.
 */
function percentileCells(read: RollupRead, q: number, only?: RawBuilder<unknown>, { windowToo = false, ...source }: CellsOptions = {}): RawBuilder<unknown> {
  // Points of an hour by a dimension of many values are a row each (the key), but those of the
  // value '' (which Tracewell's own calls are taken back from): a row of one bucket is its point,
  // that bucket's middle, as the general way below would compute it (low and high the same).
  const manyValues = read.grouped && MANY_VALUES.has(read.dimension ?? 'all')
  const alone = manyValues && read.granularitySeconds === 3600
  // Wider points (a user's or session's figure over the window, by which they are ranked): a
  // value whose rows of the point all hold one and the same duration bucket has that bucket's
  // middle as every percentile too; only the others are unnested and summed.
  const lumped = manyValues && !alone && !windowToo
  // Rows taken back (sign -1: own calls, a user's periods outside the window) never make one.
  const single = sql`r.value <> '' and r.sign = 1 and cardinality(r.durations) = 1 and r.durations[array_lower(r.durations, 1)] > 0`
  const bucket = bucketOf(read.startMs, read.granularitySeconds)
  const bucketMs = sql`(select ${BUCKET_MS}::float8[] as ms) as m`
  // The others' rows by `in` their (few) points: hashed, where `not exists` against the one-bucket
  // points was sorted for a merge (a CTE's estimate of rows is blind).
  const general = lumped
    ? sql`(select b.* from (select ${bucket} as bucket, r.* from rows r) b where (b.bucket, b.value) in (select bucket, value from points where i is null)) r`
    : sql`rows r`
  return sql`
    with rows as (${signedRows(read, only, source)}),
    ${lumped ? sql`points as (
      select ${bucket} as bucket, r.value, case when bool_and(${single}) and min(array_lower(r.durations, 1)) = max(array_lower(r.durations, 1))
        then min(array_lower(r.durations, 1)) end as i
      from rows r group by 1, 2
    ),` : sql``}
    counts as (
      select ${lumped ? sql`r.bucket` : bucket} as bucket, ${read.grouped ? sql`r.value` : sql`''::text`} as value,
        array_lower(r.durations, 1) + d.o::int - 1 as i, sum(r.sign * d.n)::float8 as n
      from ${general}, unnest(r.durations) with ordinality as d(n, o)
      where d.n <> 0${alone ? sql` and not (${single})` : sql``}
      group by ${windowToo ? sql`grouping sets ((1, 2, 3), (2, 3))` : sql`1, 2, 3`} having sum(r.sign * d.n) > 0
    ),
    seen as (
      select bucket, value, i, sum(n) over (partition by bucket, value order by i) as seen, sum(n) over (partition by bucket, value) as total
      from counts
    ),
    ranks as (
      select bucket, value, ${q}::float8 * (total - 1) as rank,
        coalesce(min(i) filter (where seen > floor(${q}::float8 * (total - 1))), max(i)) as low,
        coalesce(min(i) filter (where seen > ceil(${q}::float8 * (total - 1))), max(i)) as high
      from seen group by bucket, value, total
    )
    select bucket, value, ms[low + 1] + (rank - floor(rank)) * (ms[high + 1] - ms[low + 1]) as figure
    from ranks, ${bucketMs}
    ${alone ? sql`union all
    select ${bucket}, r.value, m.ms[array_lower(r.durations, 1) + 1]
    from rows r, ${bucketMs} where ${single}` : sql``}
    ${lumped ? sql`union all
    select o.bucket, o.value, m.ms[o.i + 1] from points o, ${bucketMs} where o.i is not null` : sql``}`
}

/**
 * Distinct users or sessions with a trace in each bucket: the UTC days wholly inside a bucket (and
 * the window) from the rows of who was active on the day, the other hours from the hourly rows.
 */
async function memberCells(db: Executor, read: RollupRead, members: 'user' | 'session'): Promise<RollupCell[]> {
  if (members === 'user' && usersByHoursOfDay(read)) return userHourCells(db, read)
  let days = false
  const parts = byDaysAndHours(read, members, (dimension, range) => {
    days ||= dimension !== members
    return rowsIn(read.projectId, dimension, range, sql`hour, value`, sql`${valueCondition(read)} and traces > 0 and value <> ''`)
  }, read.granularitySeconds * 1000)
  if (members === 'session' && read.value === undefined) {
    // session_figures holds the settled hours' rows only: the window's hours after them are read from their hourly rows.
    const settledUntil = (await sessionsSettledUntil(db)).getTime()
    const settled = { ...read, to: new Date(Math.min(read.to.getTime(), settledUntil)) }
    const spanning = byDaysAndHours(settled, members, (dimension, range) => spanningSessionRows(read, dimension, range), read.granularitySeconds * 1000)
    const open = settledUntil < read.to.getTime()
      ? rowsIn(read.projectId, members, [new Date(Math.max(read.startMs, settledUntil)), read.to], sql`hour, value`, sql` and traces > 0 and value <> ''`)
      : undefined
    return sessionCountCells(db, settled, spanning, open)
  }
  // A bucket of one hour holds each value once (the rows' key): counted without sorting them.
  const count = !days && read.granularitySeconds === 3600 ? sql`count(*)` : sql`count(distinct value)`
  const { rows } = await sql<{ bucket: number; value: number }>`
    select ${bucketOf(read.startMs, read.granularitySeconds)} as bucket, ${count}::float8 as value
    from (${parts}) r group by 1`.execute(db)
  return rows.map((row) => ({ bucket: row.bucket, group: null, value: row.value }))
}

/**
 * The rows of a user or session dimension over the window, those of the UTC days wholly inside a
 * bucket of `widthMs` from their rows of the day (ACTIVE_DAY_DIMENSIONS), the other hours' from
 * the hourly rows: `rows` of a dimension and range, joined by union all.
 */
function byDaysAndHours(
  read: RollupRead, members: 'user' | 'session', rows: (dimension: string, range: [Date, Date]) => RawBuilder<unknown>, widthMs: number,
): RawBuilder<unknown> {
  const days = wholeDays(read, widthMs)
  const hours: Array<[number, number]> = []
  let at = read.startMs
  for (const [from, to] of [...days, [read.to.getTime(), read.to.getTime()] as [number, number]]) {
    if (from > at) hours.push([at, from])
    at = Math.max(at, to)
  }
  const parts = [
    ...hours.map(([from, to]) => rows(members, [new Date(from), new Date(to)])),
    ...days.map(([from, to]) => rows(ACTIVE_DAY_DIMENSIONS[members], [new Date(from), new Date(to)])),
  ]
  // A window of no hour (to at its start) reads nothing.
  return parts.length === 0 ? rows(members, [read.to, read.to]) : sql.join(parts, sql` union all `)
}

/**
 * The UTC days, as ranges [from, to) of whole days, that lie wholly inside one bucket of `width`
 * ms and whose every hour is before the window's end (the hourly rows read are those of hours before `to`).
 */
function wholeDays(read: RollupRead, width: number): Array<[number, number]> {
  const end = read.to.getTime()
  const ranges: Array<[number, number]> = []
  for (let day = Math.ceil(read.startMs / DAY_MS) * DAY_MS; day + DAY_MS - HOUR_MS < end; day += DAY_MS) {
    const bucketEnd = read.startMs + (Math.floor((day - read.startMs) / width) + 1) * width
    if (day + DAY_MS > bucketEnd) continue
    const last = ranges.at(-1)
    if (last !== undefined && last[1] === day) last[1] = day + DAY_MS
    else ranges.push([day, day + DAY_MS])
  }
  return ranges
}

/** score_avg over whole hours, of one score or of each (grouped by name, with each one's average over the window: bucket null). */
export async function scoreRollupCells(
  db: Executor,
  read: { projectId: string; scoreName?: string | undefined; grouped: boolean; startMs: number; granularitySeconds: number; to: Date },
): Promise<RollupCell[]> {
  const { rows } = await sql<{ bucket: number | null; grp: string | null; value: number | null }>`
    select ${bucketOf(read.startMs, read.granularitySeconds)} as bucket, ${read.grouped ? sql`name` : sql`null::text`} as grp,
      sum(value_sum) / nullif(sum(scores), 0) as value
    from score_rollups
    where project_id = ${read.projectId} and hour >= ${new Date(read.startMs)} and hour < ${read.to}
      ${read.scoreName === undefined ? sql`` : sql`and name = ${read.scoreName}`}
    group by ${read.grouped ? sql`grouping sets ((1, 2), (2))` : sql`1, 2`} having sum(scores) > 0`.execute(db)
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
