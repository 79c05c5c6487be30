import { ACTIVE_DAY_DIMENSIONS, LATENCY_BUCKETS, latencyBucket, toStorableText, TRACE_SHAPE_DIMENSION, traceShapeKey, TRACEWELL_SERVICE, type SpanInsert, type UsageRollupFigures } from '@tracewell/db'
import { addDecimals, DecimalSum } from './exact-decimal.ts'
import { epochMicros } from './summary-copy.ts'
import { addCounts, AGGREGATE_OPERATION, type TraceDelta } from './trace-deltas.ts'

// What a batch of stored spans adds to the hourly usage rollups (migration 2026-11-25T0500): the
// spans folded into one combination per project, UTC hour and the four values a span is rolled up
// by (model, vendor, service, user). Written beside the spans (summary deltas); the summariser
// merges the combinations of many batches and adds each to five rollup rows, one per dimension.
// A trace's count in a row is not part of the delta: the summariser derives it from the trace's
// summary (summary-fold.ts), which alone knows whether the trace was counted before.
//
// Tracewell's own calls (service `tracewell`: playground, experiments, judges) also add to two
// more rows, 'tracewell.model' and 'tracewell.vendor' (migration 2026-12-06T0160): what usage
// takes back from the model and vendor rows to show the application's usage alone (the service
// row already says what to take back from 'all' and 'user'), reading no span.

// A cost may come as the decimal text Postgres holds (an erasure's spans, read back to be taken out).
type RollupSpan = Pick<
  SpanInsert,
  'startTimeUnixNano' | 'durationNs' | 'statusCode' | 'serviceName' | 'llmModel' | 'llmVendor' | 'llmRequestType' | 'inputTokens' | 'outputTokens' | 'userId'
> & { totalCostUsd?: number | string | null }

/** The spans of one project, hour and combination of values, as stored in a summary delta. */
export interface UsageCombination {
  project_id: string
  /** The UTC hour, ISO 8601. */
  hour: string
  model: string
  vendor: string
  service: string
  user: string
  spans: number
  errors: number
  /** Sums of the counts reported; null when no span reported one (addCounts). */
  input_tokens: number | null
  output_tokens: number | null
  /** Exact decimal text, or null when no span had a cost. */
  cost_usd: string | null
  /** Sparse latency histogram: [bucket, calls] pairs. */
  latency: Array<[number, number]>
}

/** One usage_rollups row's additions, as the fold's statement reads them. */
export type UsageRollupDelta = UsageRollupFigures

/** A trace's count in a row, and, for a row of the whole trace, the trace. */
interface Counted {
  change: 1 | -1
  failed: boolean
  bucket: number
  trace?: CountedTrace
}

/**
 * Sparse histogram pairs as the array literal of the rows' `durations`: subscripted by bucket,
 * from the lowest bucket to the highest ('[40:42]={1,0,-1}'); null for none.
 */
export function histogramLiteral(pairs: ReadonlyArray<readonly [number, number]>): string | null {
  if (pairs.length === 0) return null
  const buckets = pairs.map(([bucket]) => bucket)
  const low = Math.min(...buckets)
  const counts = new Array<number>(Math.max(...buckets) - low + 1).fill(0)
  for (const [bucket, traces] of pairs) counts[bucket - low] = (counts[bucket - low] as number) + traces
  return `[${low}:${low + counts.length - 1}]={${counts.join(',')}}`
}

/** The rollups of Tracewell's own calls by model and by vendor (what usage takes back by default). */
export const TRACEWELL_MODEL = 'tracewell.model'
export const TRACEWELL_VENDOR = 'tracewell.vendor'

const ERROR = 2
const HOUR_SECONDS = 3600

// Keys as the database will hold them: two values that store as the same text are one row.
export const storedKey = (text: string | null | undefined): string => (text ? toStorableText(text).toWellFormed() : '')

const combinationKey = (c: Pick<UsageCombination, 'project_id' | 'hour' | 'model' | 'vendor' | 'service' | 'user'>): string =>
  // U+0000 separates safely: stored text holds none.
  `${c.project_id}\u0000${c.hour}\u0000${c.model}\u0000${c.vendor}\u0000${c.service}\u0000${c.user}`

/** A batch's spans, one combination per project, hour and values. */
export class UsageDeltas {
  /** Each combination, with its latency histogram and its cost sum still open. */
  readonly #combinations = new Map<string, UsageCombination & { histogram: Map<number, number>; cost: DecimalSum }>()
  /** The hour (ISO) of each second (as the nanosecond text's leading digits) seen. */
  readonly #hours = new Map<string, string>()

  get size(): number {
    return this.#combinations.size
  }

  add(projectId: string, span: RollupSpan): void {
    const key: Pick<UsageCombination, 'project_id' | 'hour' | 'model' | 'vendor' | 'service' | 'user'> = {
      project_id: storedKey(projectId), hour: this.#hourOf(span.startTimeUnixNano),
      model: storedKey(span.llmModel), vendor: storedKey(span.llmVendor), service: storedKey(span.serviceName), user: storedKey(span.userId),
    }
    const text = combinationKey(key)
    let combination = this.#combinations.get(text)
    if (combination === undefined) {
      combination = { ...key, spans: 0, errors: 0, input_tokens: null, output_tokens: null, cost_usd: null, latency: [], histogram: new Map(), cost: new DecimalSum() }
      this.#combinations.set(text, combination)
    }
    combination.spans++
    if (span.statusCode === ERROR) combination.errors++
    // A span that sums the calls beneath it adds neither tokens, cost nor a call's latency: its
    // children do (AGGREGATE_OPERATION, as for trace totals).
    if (span.llmRequestType !== AGGREGATE_OPERATION) {
      combination.input_tokens = addCounts(combination.input_tokens, span.inputTokens)
      combination.output_tokens = addCounts(combination.output_tokens, span.outputTokens)
      if (span.totalCostUsd !== null && span.totalCostUsd !== undefined) combination.cost.add(span.totalCostUsd)
      if (span.llmModel) {
        const bucket = latencyBucket(Number(span.durationNs))
        combination.histogram.set(bucket, (combination.histogram.get(bucket) ?? 0) + 1)
      }
    }
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

  combinations(): UsageCombination[] {
    return [...this.#combinations.values()].map(({ histogram, cost, ...combination }) => ({ ...combination, cost_usd: cost.text, latency: [...histogram] }))
  }
}

/** What a trace's summary says of the rollup rows it counts in, and what it adds to them. */
export type CountedTrace = Pick<
  TraceDelta,
  'project_id' | 'start_time' | 'end_time' | 'models' | 'response_models' | 'vendors' | 'services' | 'service_name' | 'user_id' | 'session_id' |
  'prompts' | 'tags' | 'span_count' | 'error_count' | 'input_tokens' | 'output_tokens' | 'cost_usd'
>

/** A rollup row's additions from traces (counted, or taken back). */
interface TraceCount {
  project_id: string
  dimension: string
  hour: string
  value: string
  traces: number
  error_traces: number
  /** Latency bucket → traces. */
  durations: Map<number, number>
  /** The trace's own figures, added to the rows of the whole trace (TRACE_DIMENSIONS) only. */
  whole: { spans: number; errors: number; input_tokens: number | null; output_tokens: number | null; cost: DecimalSum } | null
  /** Of a user's row of the day, the traces by UTC hour of the day (24). */
  hours: number[] | null
}

/**
 * The dimensions of the trace as a whole (migration 2026-12-06T0700): their rows carry the
 * trace's own figures, spans, tokens and cost, beside its count.
 */
export const TRACE_DIMENSIONS = ['session', 'prompt', 'tag'] as const

/** The latency bucket of a trace's duration (its summary's times, ISO 8601 with microseconds). */
function durationBucket(trace: Pick<TraceDelta, 'start_time' | 'end_time'>): number {
  const start = epochMicros(trace.start_time) ?? Date.parse(trace.start_time) * 1000
  const end = epochMicros(trace.end_time) ?? Date.parse(trace.end_time) * 1000
  return latencyBucket((end - start) * 1000)
}

/** The rows that keep no latency histogram of calls: those of the whole trace, and of the day. */
const WITHOUT_CALL_LATENCY: ReadonlySet<string> = new Set([...TRACE_DIMENSIONS, TRACE_SHAPE_DIMENSION, ...Object.values(ACTIVE_DAY_DIMENSIONS)])

/** The UTC day (ISO 8601, its start) of a time or hour in ISO 8601. */
const dayOf = (iso: string): string => `${iso.slice(0, 10)}T00:00:00.000Z`

const negated = (decimal: string): string => (decimal.startsWith('-') ? decimal.slice(1) : `-${decimal}`)

/**
 * Combinations of many batches merged by key, and the traces' counts (the summariser's steps).
 * A trace counts once in the rollup rows of the UTC hour it started: under each model, vendor
 * and service it used ('' when it used none) and under its user, with whether it failed and its
 * duration; and with its own figures under its session, each prompt and each tag. It also counts
 * in the rows of its UTC day under its user and its session (ACTIVE_DAY_DIMENSIONS): two more rows
 * a trace, fewer a fold (a user's traces of a day share one). A user's row of the day holds all
 * that its hourly rows of the day hold but the calls' latency (migration 2026-12-06T0820). And with
 * its own figures under its shape (models, response models, vendors, services: trace-shapes.ts of
 * @tracewell/db) unless its root is Tracewell's own, as the metric engine reads summaries.
 */
export class UsageCombinationMerge {
  readonly #merged = new Map<string, UsageCombination>()
  /**
   * What traces added to each row (or took back, negative), by project, dimension, hour and value
   * in nested maps: each part is a string made once and hashed once (V8 keeps a string's hash),
   * where a key joined of the four at every count was built and hashed again, a sixth of the
   * fold's time (docs/benchmarks.md).
   */
  readonly #traces = new Map<string, Map<string, Map<string, Map<string, TraceCount>>>>()

  /** Adds a trace to the rows it counts in (`change` 1), or takes it back from them (-1). */
  countTrace(trace: CountedTrace, change: 1 | -1): void {
    const hour = `${trace.start_time.slice(0, 13)}:00:00.000Z`
    const count = { change, failed: trace.error_count > 0, bucket: durationBucket(trace) }
    this.#count(trace.project_id, 'all', hour, '', count)
    this.#countEach(trace.project_id, 'model', hour, trace.models, count)
    this.#countEach(trace.project_id, 'vendor', hour, trace.vendors, count)
    this.#countEach(trace.project_id, 'service', hour, trace.services, count)
    this.#count(trace.project_id, 'user', hour, trace.user_id ?? '', count)
    // A user's day row holds the figures of its hourly rows of the day (the user's spans' too, rollupRows),
    // and the traces of each of its hours (migration 2026-12-06T1621).
    const day = this.#count(trace.project_id, ACTIVE_DAY_DIMENSIONS.user, dayOf(trace.start_time), trace.user_id ?? '', count)
    const hours = (day.hours ??= new Array<number>(24).fill(0))
    const hourOfDay = Number(trace.start_time.slice(11, 13))
    hours[hourOfDay] = (hours[hourOfDay] as number) + change
    if (trace.services.includes(TRACEWELL_SERVICE)) {
      this.#countEach(trace.project_id, TRACEWELL_MODEL, hour, trace.models, count)
      this.#countEach(trace.project_id, TRACEWELL_VENDOR, hour, trace.vendors, count)
    }
    const whole = { ...count, trace }
    const shape = trace.service_name === TRACEWELL_SERVICE ? null : traceShapeKey(trace)
    if (shape !== null) this.#count(trace.project_id, TRACE_SHAPE_DIMENSION, hour, shape, whole)
    // The rows of the whole trace are the application's alone: Tracewell's own traces never count there.
    if (trace.services.includes(TRACEWELL_SERVICE)) return
    this.#count(trace.project_id, 'session', hour, trace.session_id ?? '', whole)
    this.#countActive(trace.project_id, ACTIVE_DAY_DIMENSIONS.session, dayOf(trace.start_time), trace.session_id ?? '', change)
    this.#countEach(trace.project_id, 'prompt', hour, trace.prompts ?? [], whole)
    this.#countEach(trace.project_id, 'tag', hour, trace.tags ?? [], whole)
  }

  /** Counts the trace under each of a dimension's values, or under '' when it has none. */
  #countEach(project_id: string, dimension: string, hour: string, values: readonly string[], count: Counted): void {
    if (values.length === 0) this.#count(project_id, dimension, hour, '', count)
    for (const value of values) this.#count(project_id, dimension, hour, value, count)
  }

  #count(project_id: string, dimension: string, hour: string, value: string, { change, failed, bucket, trace }: Counted): TraceCount {
    const row = this.#countActive(project_id, dimension, hour, value, change)
    if (failed) row.error_traces += change
    row.durations.set(bucket, (row.durations.get(bucket) ?? 0) + change)
    if (trace === undefined) return row
    const whole = (row.whole ??= { spans: 0, errors: 0, input_tokens: null, output_tokens: null, cost: new DecimalSum() })
    whole.spans += change * trace.span_count
    whole.errors += change * trace.error_count
    whole.input_tokens = addCounts(whole.input_tokens, trace.input_tokens === null ? null : change * trace.input_tokens)
    whole.output_tokens = addCounts(whole.output_tokens, trace.output_tokens === null ? null : change * trace.output_tokens)
    if (trace.cost_usd !== null) whole.cost.add(change === 1 ? trace.cost_usd : negated(trace.cost_usd))
    return row
  }

  /** Counts the trace in a row (of the day, for ACTIVE_DAY_DIMENSIONS: the trace's count alone); answers the row. */
  #countActive(project_id: string, dimension: string, hour: string, value: string, change: 1 | -1): TraceCount {
    const ofValue = nested(nested(nested(this.#traces, project_id), dimension), hour)
    let row = ofValue.get(value)
    if (row === undefined) {
      row = { project_id, dimension, hour, value, traces: 0, error_traces: 0, durations: new Map(), whole: null, hours: null }
      ofValue.set(value, row)
    }
    row.traces += change
    return row
  }

  add(combination: UsageCombination): void {
    const key = combinationKey(combination)
    const into = this.#merged.get(key)
    if (into === undefined) {
      this.#merged.set(key, { ...combination, latency: [...combination.latency] })
      return
    }
    into.spans += combination.spans
    into.errors += combination.errors
    into.input_tokens = addCounts(into.input_tokens, combination.input_tokens)
    into.output_tokens = addCounts(into.output_tokens, combination.output_tokens)
    into.cost_usd = combination.cost_usd === null ? into.cost_usd : addDecimals(into.cost_usd, combination.cost_usd)
    into.latency.push(...combination.latency)
  }

  /**
   * Each combination added to its six rows (dimension 'all' with value '', then one per value, and
   * its user's row of the day; eight for Tracewell's own calls),
   * with the traces counted in each, rows in key order.
   */
  rollupRows(): UsageRollupDelta[] {
    const rows = new Map<string, UsageRollupDelta>()
    // Each row's cost summed as it goes and written once at the end: a sum kept as text was parsed
    // again at every addition, which was most of the fold's rollup counting (bench:writer's profile).
    const costs = new Map<UsageRollupDelta, DecimalSum>()
    const addCost = (row: UsageRollupDelta, cost: string) => {
      let sum = costs.get(row)
      if (sum === undefined) costs.set(row, (sum = new DecimalSum()))
      sum.add(cost)
    }
    const rowOf = (key: string, project_id: string, dimension: string, hour: string, value: string): UsageRollupDelta => {
      let row = rows.get(key)
      if (row === undefined) {
        row = {
          project_id, dimension, hour, value, traces: 0, spans: 0, errors: 0, input_tokens: null, output_tokens: null, cost_usd: null,
          // The rows of the whole trace keep no latency of calls ('{}'): a session's hour is a row of its own.
          latency: WITHOUT_CALL_LATENCY.has(dimension) ? [] : new Array<number>(LATENCY_BUCKETS).fill(0), error_traces: 0, durations: null, hours: null,
        }
        rows.set(key, row)
      }
      return row
    }
    for (const c of this.#merged.values()) {
      const dimensions: Array<[string, string, string]> = [
        ['all', c.hour, ''], ['model', c.hour, c.model], ['vendor', c.hour, c.vendor], ['service', c.hour, c.service], ['user', c.hour, c.user],
        [ACTIVE_DAY_DIMENSIONS.user, dayOf(c.hour), c.user],
      ]
      if (c.service === TRACEWELL_SERVICE) dimensions.push([TRACEWELL_MODEL, c.hour, c.model], [TRACEWELL_VENDOR, c.hour, c.vendor])
      for (const [dimension, hour, value] of dimensions) {
        const row = rowOf(`${c.project_id}\u0000${dimension}\u0000${hour}\u0000${value}`, c.project_id, dimension, hour, value)
        row.spans += c.spans
        row.errors += c.errors
        row.input_tokens = addCounts(row.input_tokens, c.input_tokens)
        row.output_tokens = addCounts(row.output_tokens, c.output_tokens)
        if (c.cost_usd !== null) addCost(row, c.cost_usd)
        if (row.latency.length > 0) for (const [bucket, calls] of c.latency) (row.latency[bucket] as number) += calls
      }
    }
    for (const counted of leaves(this.#traces)) {
      const key = `${counted.project_id}\u0000${counted.dimension}\u0000${counted.hour}\u0000${counted.value}`
      const durations = [...counted.durations].filter(([, traces]) => traces !== 0)
      const wholeCost = counted.whole === null ? null : counted.whole.cost.text
      const whole = counted.whole !== null && (counted.whole.spans !== 0 || counted.whole.errors !== 0 || !!counted.whole.input_tokens ||
        !!counted.whole.output_tokens || (wholeCost !== null && Number(wholeCost) !== 0)) ? counted.whole : null
      const hours = counted.hours !== null && counted.hours.some((traces) => traces !== 0) ? counted.hours : null
      // A trace taken back and counted again unchanged adds nothing.
      if (counted.traces === 0 && counted.error_traces === 0 && durations.length === 0 && whole === null && hours === null) continue
      const row = rowOf(key, counted.project_id, counted.dimension, counted.hour, counted.value)
      row.traces += counted.traces
      row.error_traces += counted.error_traces
      row.durations = histogramLiteral(durations)
      row.hours = hours
      if (whole === null) continue
      row.spans += whole.spans
      row.errors += whole.errors
      row.input_tokens = addCounts(row.input_tokens, whole.input_tokens)
      row.output_tokens = addCounts(row.output_tokens, whole.output_tokens)
      if (wholeCost !== null) addCost(row, wholeCost)
    }
    for (const [row, sum] of costs) row.cost_usd = sum.text
    return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
  }
}

/** The map under `key` in `maps`, added empty when there is none. */
function nested<Value>(maps: Map<string, Map<string, Value>>, key: string): Map<string, Value> {
  let map = maps.get(key)
  if (map === undefined) maps.set(key, (map = new Map()))
  return map
}

/** Every row of the nested maps. */
function* leaves(traces: Map<string, Map<string, Map<string, Map<string, TraceCount>>>>): Generator<TraceCount> {
  for (const dimensions of traces.values()) for (const hours of dimensions.values()) for (const values of hours.values()) yield* values.values()
}
