import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import type { ChartKind, WidgetSeries } from '../api/dashboards.api.ts'
import { formatMetric, type Metric } from '../lib/metrics.ts'
import { seriesColours } from '../lib/usage-series.ts'

/** A series without a group (the metric not split) is drawn and listed under this name. */
const allGroup = 'all'
/** Beside other groups, the traces without a value to group by (no model, say). */
const noneGroup = '(none)'

const additive: ReadonlySet<Metric> = new Set(['cost', 'tokens', 'input_tokens', 'output_tokens', 'traces', 'spans'])

interface Rows {
  rows: Array<Record<string, number | string | null>>
  groups: string[]
}

/** One row per point in time, a column per group, in time order. */
export function seriesRows(data: WidgetSeries | undefined): Rows {
  const byTime = new Map<string, Record<string, number | string | null>>()
  const groups: string[] = []
  const split = (data?.series.length ?? 0) > 1
  for (const series of data?.series ?? []) {
    const group = series.group ?? (split ? noneGroup : allGroup)
    groups.push(group)
    for (const point of series.points) {
      const row = byTime.get(point.t) ?? { t: point.t }
      row[group] = point.value
      byTime.set(point.t, row)
    }
  }
  const rows = [...byTime.values()].sort((a, b) => Date.parse(String(a.t)) - Date.parse(String(b.t)))
  return { rows, groups }
}

function timeLabel(iso: string, spanMs: number): string {
  const date = new Date(iso)
  const pad = (n: number) => String(n).padStart(2, '0')
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}`
  return spanMs > 86_400_000 ? `${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${clock}` : clock
}

/** A group's figure for a number widget: a count's sum over the window, else its latest value. */
function headline(metric: Metric, values: Array<number | null>): number | null {
  const known = values.filter((value): value is number => value !== null)
  if (known.length === 0) return null
  return additive.has(metric) ? known.reduce((sum, value) => sum + value, 0) : (known[known.length - 1] ?? null)
}

export interface ChartPoint {
  t: string
  group: string | null
}

/**
 * A metric's series as a line or bar chart, a table or a number, in the console's charting
 * library (as the usage page). A click on a point hands over its time and group: the traces
 * behind it. `threshold` draws a monitor's threshold across the chart.
 */
export function MetricChart(props: { metric: Metric; chart: ChartKind; data: WidgetSeries | undefined; height: number; threshold?: number; onPoint?: (point: ChartPoint) => void; caption: string }) {
  const { metric, chart, data, height, threshold, onPoint, caption } = props
  const { rows, groups } = seriesRows(data)
  const format = (value: unknown) => formatMetric(metric, typeof value === 'number' ? value : null)
  // The trace list has no filter for "no model": such a point opens its time bucket only.
  const groupOf = (group: string) => (data?.series.some((series) => series.group === group) ? group : null)
  if (rows.length === 0 && chart !== 'number') return <p className="muted small chart-empty">Nothing in this period.</p>
  if (chart === 'number') {
    return (
      <dl className="metric-numbers">
        {(groups.length === 0 ? [allGroup] : groups).map((group) => (
          <div key={group}>
            {groups.length > 1 && <dt>{group}</dt>}
            <dd className="metric-number">
              {format(
                headline(
                  metric,
                  rows.map((row) => (row[group] as number | null | undefined) ?? null),
                ),
              )}
            </dd>
          </div>
        ))}
      </dl>
    )
  }
  if (chart === 'table') return <SeriesTable caption={caption} rows={rows} groups={groups} format={format} onPoint={onPoint && ((t, group) => onPoint({ t, group: groupOf(group) }))} />
  const times = rows.map((row) => Date.parse(String(row.t)))
  const spanMs = times.length > 1 ? (times[times.length - 1] ?? 0) - (times[0] ?? 0) : 0
  const axes = (
    <>
      <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
      <XAxis dataKey="t" tickFormatter={(value: string) => timeLabel(value, spanMs)} stroke="var(--muted)" fontSize={11} minTickGap={24} />
      <YAxis tickFormatter={format} stroke="var(--muted)" fontSize={11} width={64} domain={threshold === undefined ? undefined : [0, (max: number) => Math.max(max, threshold * 1.1)]} />
      <Tooltip
        formatter={(value) => format(value)}
        labelFormatter={(label) => new Date(String(label)).toLocaleString()}
        contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)', color: 'var(--text)' }}
      />
      {groups.length > 1 && <Legend wrapperStyle={{ fontSize: 12 }} />}
      {threshold !== undefined && (
        <ReferenceLine y={threshold} stroke="var(--error)" strokeDasharray="6 4" label={{ value: `threshold ${format(threshold)}`, fill: 'var(--error)', fontSize: 11, position: 'insideTopRight' }} />
      )}
    </>
  )
  const click = (group: string) => (row: unknown) => {
    const t = (row as { payload?: { t?: string } }).payload?.t
    if (onPoint && t) onPoint({ t, group: groupOf(group) })
  }
  return (
    <div className="chart-area" aria-hidden="true">
      <ResponsiveContainer width="100%" height={height}>
        {chart === 'bar' ? (
          <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 8 }}>
            {axes}
            {groups.map((group, index) => (
              <Bar
                key={group}
                dataKey={group}
                name={group}
                fill={seriesColours[index % seriesColours.length]}
                isAnimationActive={false}
                cursor={onPoint ? 'pointer' : undefined}
                onClick={click(group)}
              />
            ))}
          </BarChart>
        ) : (
          <LineChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 8 }}>
            {axes}
            {groups.map((group, index) => (
              <Line
                key={group}
                dataKey={group}
                name={group}
                stroke={seriesColours[index % seriesColours.length]}
                strokeWidth={2}
                dot={rows.length <= 60 ? true : { r: 1.5 }}
                connectNulls
                isAnimationActive={false}
                activeDot={{ r: 5, cursor: onPoint ? 'pointer' : undefined, onClick: (_event: unknown, dot: unknown) => click(group)(dot) }}
              />
            ))}
          </LineChart>
        )}
      </ResponsiveContainer>
    </div>
  )
}

/** The figures as a table, a row per point; each figure links to its traces when `onPoint` is given. */
function SeriesTable(props: { caption: string; rows: Rows['rows']; groups: string[]; format: (value: unknown) => string; onPoint?: ((t: string, group: string) => void) | undefined }) {
  const { caption, rows, groups, format, onPoint } = props
  return (
    <div className="series-table">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            {groups.map((group) => (
              <th key={group} scope="col">
                {group}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={String(row.t)}>
              <th scope="row">{new Date(String(row.t)).toLocaleString()}</th>
              {groups.map((group) => (
                <td key={group}>
                  {onPoint && typeof row[group] === 'number' ? (
                    <button type="button" className="link-button" onClick={() => onPoint(String(row.t), group)}>
                      {format(row[group])}
                    </button>
                  ) : (
                    format(row[group])
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
