import { formatCost, formatCount, formatDuration } from './format.ts'
import type { TraceFilters } from './trace-filters.ts'

// The metrics monitors watch and dashboards chart (docs/api.md#monitors), as the API names them,
// with how the console labels and formats each.

export const monitorMetrics = ['error_rate', 'latency_p50', 'latency_p95', 'latency_p99', 'cost', 'tokens', 'traces', 'score_avg', 'judge_failure_rate'] as const
export const dashboardMetrics = [...monitorMetrics, 'input_tokens', 'output_tokens', 'spans', 'sessions', 'users'] as const
export type MonitorMetric = (typeof monitorMetrics)[number]
export type Metric = (typeof dashboardMetrics)[number]

export const metricGroups = ['model', 'vendor', 'service', 'user', 'session', 'prompt', 'tag', 'score_name'] as const
export type MetricGroup = (typeof metricGroups)[number]

export const metricLabels: Record<Metric, string> = {
  error_rate: 'Error rate',
  latency_p50: 'Trace duration p50',
  latency_p95: 'Trace duration p95',
  latency_p99: 'Trace duration p99',
  cost: 'Cost',
  tokens: 'Tokens',
  traces: 'Traces',
  score_avg: 'Score average',
  judge_failure_rate: 'Judge failure rate',
  input_tokens: 'Input tokens',
  output_tokens: 'Output tokens',
  spans: 'Spans',
  sessions: 'Sessions',
  users: 'Users',
}

export const groupLabels: Record<MetricGroup, string> = { model: 'Model', vendor: 'Vendor', service: 'Service', user: 'User', session: 'Session', prompt: 'Prompt (registry:version)', tag: 'Tag', score_name: 'Score name' }

const formatPercent = (value: number) => `${(value * 100).toFixed(value < 0.1 && value > 0 ? 2 : 1)}%`
const formatAverage = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2))

/** A metric's value as people read it: rates as percentages, latencies as durations, cost in dollars. */
export function formatMetric(metric: Metric, value: number | null | undefined): string {
  if (value === null || value === undefined) return 'no data'
  switch (metric) {
    case 'error_rate':
    case 'judge_failure_rate':
      return formatPercent(value)
    case 'latency_p50':
    case 'latency_p95':
    case 'latency_p99':
      return formatDuration(value)
    case 'cost':
      return formatCost(value)
    case 'score_avg':
      return formatAverage(value)
    default:
      return formatCount(value)
  }
}

/** What a threshold is typed in: rates as a share (0.05 = 5%), so the hint says so. */
export function thresholdHint(metric: Metric): string {
  if (metric === 'error_rate' || metric === 'judge_failure_rate') return 'a share: 0.05 is 5%'
  if (metric.startsWith('latency_')) return 'milliseconds'
  if (metric === 'cost') return 'US dollars'
  return ''
}

/** GET /api/traces's query parameters that narrow which traces a metric counts (no time, no sort). */
export interface MetricFilter {
  service?: string
  model?: string
  vendor?: string
  status?: 'error' | 'ok'
  name?: string
  attr?: string[]
  session?: string
  user?: string
  q?: string
}

/** The filter form's fields as a metric's filter, the empty ones left out. */
export function metricFilterOf(filters: TraceFilters): MetricFilter {
  const filter: MetricFilter = {}
  for (const key of ['service', 'model', 'vendor', 'name', 'session', 'user', 'q'] as const) {
    const value = filters[key]?.trim()
    if (value) filter[key] = value
  }
  if (filters.status) filter.status = filters.status
  if (filters.attr.length > 0) filter.attr = [...filters.attr]
  return filter
}

/** A metric's filter in the filter form's shape. */
export function traceFiltersOf(filter: MetricFilter | null | undefined): TraceFilters {
  return { attr: [...(filter?.attr ?? [])], sort: 'time', order: 'desc', live: false, includeTracewellCalls: false, ...pick(filter ?? {}) }
}

function pick(filter: MetricFilter): Partial<TraceFilters> {
  const { service, model, vendor, status, name, session, user, q } = filter
  return Object.fromEntries(Object.entries({ service, model, vendor, status, name, session, user, q }).filter(([, value]) => value !== undefined))
}

/** The filter in a line: "service=chat, model=gpt-4o", or "all traces". */
export function describeFilter(filter: MetricFilter | null | undefined): string {
  const parts = Object.entries(filter ?? {}).flatMap(([key, value]) => (Array.isArray(value) ? value.map((pair) => String(pair)) : [`${key}=${String(value)}`]))
  return parts.length === 0 ? 'all traces' : parts.join(', ')
}

/** A window in seconds as "5 min", "1 h", "1 d". */
export function formatSeconds(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`
  if (seconds % 60 === 0) return `${seconds / 60} min`
  return `${seconds} s`
}

/**
 * The trace list of one bucket of a chart: the bucket's time window, the widget's filter and, for
 * a grouped series, the group as the trace list's own filter where it has one.
 */
export function traceListSearch(
  projectId: string,
  point: { t: string; granularitySeconds: number },
  filter: MetricFilter | null | undefined,
  groupBy?: MetricGroup | null,
  group?: string | null,
): string {
  const params = new URLSearchParams({ project_id: projectId })
  const from = new Date(point.t)
  params.set('from', from.toISOString())
  params.set('to', new Date(from.getTime() + point.granularitySeconds * 1000).toISOString())
  for (const [key, value] of Object.entries(filter ?? {})) {
    if (Array.isArray(value)) for (const pair of value) params.append(key, String(pair))
    else if (value !== undefined) params.set(key, String(value))
  }
  // The trace list has no prompt or tag filter (yet): a point of such a group opens its window's traces.
  const groupParam: Partial<Record<MetricGroup, string>> = { model: 'model', vendor: 'vendor', service: 'service', user: 'user', session: 'session', score_name: 'score_name' }
  if (groupBy && group && group !== '(none)' && groupParam[groupBy]) params.set(groupParam[groupBy], group)
  return params.toString()
}
