// The trace list's filters live in the page's URL, under the query API's own parameter names
// (docs/api.md#trace-queries), so a view can be shared, bookmarked and reloaded as it is.

export const timeRanges = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const
export type TimeRange = keyof typeof timeRanges

/** Columns the server sorts by (over every matching trace); the others sort the loaded rows. */
export const serverSorts = ['time', 'duration', 'cost', 'tokens', 'score'] as const
export const clientSorts = ['name', 'service', 'models', 'spans', 'status'] as const
export type TraceSort = (typeof serverSorts)[number] | (typeof clientSorts)[number]

export interface TraceFilters {
  /** A relative window ending now, re-evaluated at every load; or from/to. */
  range?: TimeRange
  from?: string
  to?: string
  service?: string
  model?: string
  vendor?: string
  status?: 'error' | 'ok'
  name?: string
  /** `key=value` pairs a span attribute must match. */
  attr: string[]
  session?: string
  user?: string
  minDurationMs?: string
  minCost?: string
  q?: string
  /** A score the trace has; with min/max on its number or a label (and what sort=score orders by). */
  scoreName?: string
  minScore?: string
  maxScore?: string
  scoreValue?: string
  sort: TraceSort
  order: 'desc' | 'asc'
  live: boolean
  /** Also the traces Tracewell made itself (playground, experiments, judges), left out by default. */
  includeTracewellCalls: boolean
}

export const defaultTraceFilters: TraceFilters = { attr: [], sort: 'time', order: 'desc', live: false, includeTracewellCalls: false }

/** The text filters: URL parameter → field. */
const textFields = {
  service: 'service',
  model: 'model',
  vendor: 'vendor',
  name: 'name',
  session: 'session',
  user: 'user',
  min_duration_ms: 'minDurationMs',
  min_cost: 'minCost',
  q: 'q',
  score_name: 'scoreName',
  min_score: 'minScore',
  max_score: 'maxScore',
  score_value: 'scoreValue',
  from: 'from',
  to: 'to',
} as const satisfies Record<string, keyof TraceFilters>

const sorts: readonly string[] = [...serverSorts, ...clientSorts]

export function readTraceFilters(params: URLSearchParams): TraceFilters {
  const filters: TraceFilters = { ...defaultTraceFilters, attr: params.getAll('attr').filter((pair) => pair.includes('=')) }
  for (const [param, field] of Object.entries(textFields)) {
    const value = params.get(param)?.trim()
    if (value) filters[field] = value
  }
  const range = params.get('range')
  if (range !== null && range in timeRanges) filters.range = range as TimeRange
  const status = params.get('status')
  if (status === 'error' || status === 'ok') filters.status = status
  const sort = params.get('sort')
  if (sort !== null && sorts.includes(sort)) filters.sort = sort as TraceSort
  if (params.get('order') === 'asc') filters.order = 'asc'
  filters.live = params.get('live') === '1'
  filters.includeTracewellCalls = params.get('include_tracewell_calls') === 'true'
  return filters
}

/** The URL parameters of `filters` (defaults left out), keeping `keep` (e.g. project_id) as they were. */
export function writeTraceFilters(filters: TraceFilters, keep: URLSearchParams = new URLSearchParams(), keepNames: readonly string[] = ['project_id']): URLSearchParams {
  const params = new URLSearchParams()
  for (const name of keepNames) {
    const value = keep.get(name)
    if (value !== null) params.set(name, value)
  }
  if (filters.range) params.set('range', filters.range)
  for (const [param, field] of Object.entries(textFields)) {
    const value = filters[field]
    if (typeof value === 'string' && value.trim() !== '') params.set(param, value.trim())
  }
  if (filters.status) params.set('status', filters.status)
  for (const pair of filters.attr) params.append('attr', pair)
  if (filters.sort !== 'time') params.set('sort', filters.sort)
  if (filters.order !== 'desc') params.set('order', filters.order)
  if (filters.live) params.set('live', '1')
  if (filters.includeTracewellCalls) params.set('include_tracewell_calls', 'true')
  return params
}

/** The query of GET /api/traces for these filters, at `now`. */
export function traceListQuery(filters: TraceFilters, now: number): Record<string, string | string[] | undefined> {
  const from = filters.range ? new Date(now - timeRanges[filters.range]).toISOString() : filters.from
  // Sorting by score needs the score's name; without one the list keeps the server's time order.
  const isServerSort = (serverSorts as readonly string[]).includes(filters.sort) && (filters.sort !== 'score' || Boolean(filters.scoreName))
  const scoreName = filters.scoreName
  return {
    from,
    to: filters.range ? undefined : filters.to,
    service: filters.service,
    model: filters.model,
    vendor: filters.vendor,
    status: filters.status,
    name: filters.name,
    attr: filters.attr.length > 0 ? filters.attr : undefined,
    session: filters.session,
    user: filters.user,
    min_duration_ms: filters.minDurationMs,
    min_cost: filters.minCost,
    q: filters.q,
    score_name: scoreName,
    min_score: scoreName ? filters.minScore : undefined,
    max_score: scoreName ? filters.maxScore : undefined,
    score_value: scoreName ? filters.scoreValue : undefined,
    sort: isServerSort && filters.sort !== 'time' ? filters.sort : undefined,
    order: isServerSort && filters.order !== 'desc' ? filters.order : undefined,
    include_tracewell_calls: filters.includeTracewellCalls ? 'true' : undefined,
  }
}

/** How many filters narrow the list (for a "3 filters" badge); sorting and live mode are not filters. */
export function activeFilterCount(filters: TraceFilters): number {
  // A score's bounds narrow only with its name: they count as one filter with it.
  const texts = Object.values(textFields).filter((field) => !['from', 'to', 'minScore', 'maxScore', 'scoreValue'].includes(field) && filters[field])
  return texts.length + filters.attr.length + (filters.status ? 1 : 0) + (filters.range || filters.from || filters.to ? 1 : 0)
}
