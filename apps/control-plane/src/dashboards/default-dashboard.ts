import type { DashboardWidget } from '@tracewell/db'

// The dashboard every project starts with: the usage page (apps/console/src/pages/usage.page.tsx,
// GET /api/usage) as widgets. Its totals become number widgets, its charts bar charts over time,
// its score averages a line per score. The usage page counts spans with an error (the rollups'
// figure); the metric engine measures traces, so that card is the share of traces with an error.
// Laid out on a 12-column grid, the console's.

const number = (id: string, title: string, metric: DashboardWidget['metric'], x: number, y: number, w: number): DashboardWidget => ({
  id,
  title,
  metric,
  chart: 'number',
  layout: { x, y, w, h: 2 },
})

const chart = (id: string, title: string, metric: DashboardWidget['metric'], chart: 'bar' | 'line', x: number, y: number, extra: Partial<DashboardWidget> = {}): DashboardWidget => ({
  id,
  title,
  metric,
  chart,
  ...extra,
  layout: { x, y, w: 6, h: 5 },
})

export const DEFAULT_DASHBOARD_NAME = 'Usage'

export const defaultDashboardWidgets: readonly DashboardWidget[] = [
  number('total-cost', 'Cost', 'cost', 0, 0, 3),
  number('total-input-tokens', 'Input tokens', 'input_tokens', 3, 0, 3),
  number('total-output-tokens', 'Output tokens', 'output_tokens', 6, 0, 3),
  number('total-traces', 'Traces', 'traces', 9, 0, 3),
  number('total-error-rate', 'Traces with an error', 'error_rate', 0, 2, 4),
  number('total-latency-p50', 'Trace duration p50', 'latency_p50', 4, 2, 4),
  number('total-latency-p95', 'Trace duration p95', 'latency_p95', 8, 2, 4),
  chart('cost', 'Cost', 'cost', 'bar', 0, 4),
  chart('input-tokens', 'Input tokens', 'input_tokens', 'bar', 6, 4),
  chart('output-tokens', 'Output tokens', 'output_tokens', 'bar', 0, 9),
  chart('traces', 'Traces', 'traces', 'bar', 6, 9),
  chart('error-rate', 'Traces with an error', 'error_rate', 'line', 0, 14),
  chart('score-averages', 'Score averages', 'score_avg', 'line', 6, 14, { groupBy: 'score_name' }),
]
