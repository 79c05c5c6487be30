import { defaultGranularitySeconds, MAX_SERIES_POINTS, metricSeries, metricValue, type DashboardWidget, type Executor, type Metric, type MetricSeries } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'

// A widget's series over a window, from the one metric engine (metric-series.repository.ts).

export interface WidgetData {
  id: string
  granularity: number
  series: MetricSeries['series']
}

const hourMs = 3_600_000

/**
 * Metrics whose figure over a window is the sum of its hours': a number of these is summed from
 * hourly points, which the rollups answer (a row an hour) where the summaries would read a row a
 * trace. Its window is then taken back to a whole hour, as a series' is to a whole point.
 */
const ADDITIVE: ReadonlySet<Metric> = new Set(['cost', 'tokens', 'input_tokens', 'output_tokens', 'traces', 'spans'])
const additiveNumber = (widget: DashboardWidget, from: Date, to: Date) =>
  widget.chart === 'number' && ADDITIVE.has(widget.metric) && pointsOf(from, to, 3600) <= MAX_SERIES_POINTS

/** Where a number widget's window starts: `from`, or its hour when summed from hourly points. */
export function numberFrom(widget: DashboardWidget, from: Date, to: Date): Date {
  return additiveNumber(widget, from, to) ? new Date(Math.floor(from.getTime() / hourMs) * hourMs) : from
}

const pointsOf = (from: Date, to: Date, granularity: number) => {
  const step = granularity * 1000
  return Math.ceil((to.getTime() - Math.floor(from.getTime() / step) * step) / step)
}

/** The point width of each widget over [from, to), or a 400 naming the widget whose series would be too long. */
export function widgetGranularity(widget: DashboardWidget, from: Date, to: Date): number {
  // A number is one figure over the whole window.
  if (widget.chart === 'number') return Math.max(1, Math.ceil((to.getTime() - numberFrom(widget, from, to).getTime()) / 1000))
  const granularity = widget.granularity ?? defaultGranularitySeconds(from, to)
  const points = pointsOf(from, to, granularity)
  if (points > MAX_SERIES_POINTS) {
    throw new BadRequestError(
      `querystring/from: the widget ${JSON.stringify(widget.id)} would have ${points} points of ${granularity} s; at most ${MAX_SERIES_POINTS}: narrow the window or widen its granularity`,
    )
  }
  return granularity
}

export async function widgetData(db: Executor, projectId: string, widget: DashboardWidget, from: Date, to: Date, granularity: number): Promise<WidgetData> {
  const query = {
    projectId,
    metric: widget.metric,
    scoreName: widget.scoreName,
    filter: widget.filter,
    from,
    to,
  }
  if (widget.chart === 'number') {
    const t = numberFrom(widget, from, to)
    const value = additiveNumber(widget, from, to) ? sumOf(await metricSeries(db, { ...query, from: t, granularitySeconds: 3600 })) : await metricValue(db, query)
    return { id: widget.id, granularity, series: [{ group: null, points: [{ t: t.toISOString(), value }] }] }
  }
  const { series } = await metricSeries(db, { ...query, groupBy: widget.groupBy, granularitySeconds: granularity })
  return { id: widget.id, granularity, series }
}

/** The sum of an ungrouped series' points; unknown (a cost no span could be priced for) only when every point is. */
function sumOf({ series }: MetricSeries): number | null {
  const values = (series[0]?.points ?? []).map((point) => point.value).filter((value): value is number => value !== null)
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0)
}
