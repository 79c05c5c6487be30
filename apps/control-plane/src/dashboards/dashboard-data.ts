import { defaultGranularitySeconds, MAX_SERIES_POINTS, metricSeries, metricValue, type DashboardWidget, type Executor, type MetricSeries } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'

// A widget's series over a window, from the one metric engine (metric-series.repository.ts).

export interface WidgetData {
  id: string
  granularity: number
  series: MetricSeries['series']
}

const pointsOf = (from: Date, to: Date, granularity: number) => {
  const step = granularity * 1000
  return Math.ceil((to.getTime() - Math.floor(from.getTime() / step) * step) / step)
}

/** The point width of each widget over [from, to), or a 400 naming the widget whose series would be too long. */
export function widgetGranularity(widget: DashboardWidget, from: Date, to: Date): number {
  // A number is one figure over the whole window.
  if (widget.chart === 'number') return Math.max(1, Math.ceil((to.getTime() - from.getTime()) / 1000))
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
    return { id: widget.id, granularity, series: [{ group: null, points: [{ t: from.toISOString(), value: await metricValue(db, query) }] }] }
  }
  const { series } = await metricSeries(db, { ...query, groupBy: widget.groupBy, granularitySeconds: granularity })
  return { id: widget.id, granularity, series }
}
