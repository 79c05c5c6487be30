import { defaultGranularitySeconds, MAX_SERIES_POINTS, metricSeries, metricValue, type DashboardWidget, type Executor, type MetricSeries } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'

// A widget's series over a window, from the one metric engine (metric-series.repository.ts).

export interface WidgetData {
  id: string
  granularity: number
  series: MetricSeries['series']
}

const hourMs = 3_600_000

/**
 * A number's window is taken back to the start of its hour, as a series' is to a whole point: the
 * hourly rollups then answer it (a row an hour) where the summaries would read a row a trace
 * (metric-series.repository.ts). Not for a window of more than MAX_SERIES_POINTS hours, which the
 * summaries answer as asked.
 */
const alignedNumber = (widget: DashboardWidget, from: Date, to: Date) => widget.chart === 'number' && pointsOf(from, to, 3600) <= MAX_SERIES_POINTS

/** Where a number widget's window starts: `from`, or its hour. */
export function numberFrom(widget: DashboardWidget, from: Date, to: Date): Date {
  return alignedNumber(widget, from, to) ? new Date(Math.floor(from.getTime() / hourMs) * hourMs) : from
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
    const value = await metricValue(db, { ...query, from: t })
    return { id: widget.id, granularity, series: [{ group: null, points: [{ t: t.toISOString(), value }] }] }
  }
  const { series } = await metricSeries(db, { ...query, groupBy: widget.groupBy, granularitySeconds: granularity })
  return { id: widget.id, granularity, series }
}
