import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import type { ScoreAverage, UsagePoint } from '../api/types.ts'
import { formatCost, formatCount } from '../lib/format.ts'
import { chartRows, groupColours, scoreRows, seriesColours, type UsageMetric } from '../lib/usage-series.ts'

interface ChartSpec {
  title: string
  metric: UsageMetric
  format: (value: number) => string
  /**
   * Whether the groups' values add up to the total. Spans do (each has one model, vendor, service
   * and user, or none), so cost, tokens and errors stack; traces do not (a trace with calls of two
   * models counts under each; under "(none)" only a trace that called no model), so their bars
   * stand side by side.
   */
  additive: boolean
}

const charts: ChartSpec[] = [
  { title: 'Cost', metric: 'costUsd', format: formatCost, additive: true },
  { title: 'Input tokens', metric: 'inputTokens', format: formatCount, additive: true },
  { title: 'Output tokens', metric: 'outputTokens', format: formatCount, additive: true },
  { title: 'Traces', metric: 'traces', format: formatCount, additive: false },
  // Spans, as the usage rollups count them; the trace list's status filter counts traces.
  { title: 'Spans with an error', metric: 'errors', format: formatCount, additive: true },
]

function bucketLabel(iso: string, bucket: 'hour' | 'day'): string {
  const date = new Date(iso)
  const pad = (n: number) => String(n).padStart(2, '0')
  return bucket === 'hour' ? `${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}h` : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

/** Cost, tokens, traces and errors over time, stacked by group; each chart has a table for screen readers. */
export default function UsageCharts({
  series,
  bucket,
  buckets,
  grouped,
  scores = [],
}: {
  series: UsagePoint[]
  bucket: 'hour' | 'day'
  /** Every bucket of the window (bucketStarts), drawn empty where nothing was recorded. */
  buckets: readonly string[]
  grouped: boolean
  scores?: Array<ScoreAverage & { bucket: string }>
}) {
  if (series.length === 0 && scores.length === 0) return <p className="empty">Nothing was recorded in this period.</p>
  const colourOf = groupColours(series, grouped)
  return (
    <div className="charts">
      {charts.map((chart) => {
        const { rows, groups } = chartRows(series, chart.metric, grouped, buckets)
        return (
          <figure key={chart.metric} className="card chart">
            <figcaption>{chart.title}</figcaption>
            {grouped && !chart.additive && <p className="chart-note">A trace counts under every group one of its spans has, so the bars do not add up to the total.</p>}
            <div className="chart-area" aria-hidden="true">
              <ResponsiveContainer width="100%" height={220}>
                <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 8 }}>
                  <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
                  <XAxis dataKey="bucket" tickFormatter={(value: string) => bucketLabel(value, bucket)} stroke="var(--muted)" fontSize={11} minTickGap={16} />
                  <YAxis tickFormatter={(value: number) => chart.format(value)} stroke="var(--muted)" fontSize={11} width={64} />
                  <Tooltip
                    formatter={(value) => chart.format(Number(value))}
                    labelFormatter={(label) => bucketLabel(String(label), bucket)}
                    contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)', color: 'var(--text)' }}
                    cursor={{ fill: 'var(--hover)' }}
                  />
                  {grouped && <Legend wrapperStyle={{ fontSize: 12 }} />}
                  {groups.map((group) => (
                    <Bar key={group} dataKey={group} name={group} stackId={chart.additive ? 'stack' : undefined} fill={colourOf(group)} isAnimationActive={false} />
                  ))}
                </BarChart>
              </ResponsiveContainer>
            </div>
            <BucketTable caption={`${chart.title} as a table`} bucket={bucket} columns={groups} rows={rows} format={(value) => chart.format(value as number)} />
          </figure>
        )
      })}
      {scores.length > 0 && <ScoreChart scores={scores} bucket={bucket} buckets={buckets} />}
    </div>
  )
}

const formatAverage = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2))

/** Each score's average per bucket, a line per score name; with its figures as a table. */
function ScoreChart({ scores, bucket, buckets }: { scores: Array<ScoreAverage & { bucket: string }>; bucket: 'hour' | 'day'; buckets: readonly string[] }) {
  const { rows, names } = scoreRows(scores, buckets)
  return (
    <figure className="card chart score-chart">
      <figcaption>Score averages</figcaption>
      <div className="chart-area" aria-hidden="true">
        <ResponsiveContainer width="100%" height={220}>
          <LineChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis dataKey="bucket" tickFormatter={(value: string) => bucketLabel(value, bucket)} stroke="var(--muted)" fontSize={11} minTickGap={16} />
            <YAxis tickFormatter={formatAverage} stroke="var(--muted)" fontSize={11} width={48} />
            <Tooltip
              formatter={(value) => formatAverage(Number(value))}
              labelFormatter={(label) => bucketLabel(String(label), bucket)}
              contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)', color: 'var(--text)' }}
            />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            {names.map((name, index) => (
              <Line key={name} dataKey={name} name={name} stroke={seriesColours[index % seriesColours.length]} strokeWidth={2} dot connectNulls isAnimationActive={false} />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
      <BucketTable caption="Score averages as a table" bucket={bucket} columns={names} rows={rows} format={(value) => (typeof value === 'number' ? formatAverage(value) : '—')} />
    </figure>
  )
}

/** A chart's figures as a table, a row per bucket: what a screen reader reads instead of the chart. */
function BucketTable(props: { caption: string; bucket: 'hour' | 'day'; columns: readonly string[]; rows: ReadonlyArray<Record<string, unknown>>; format: (value: unknown) => string }) {
  const { caption, bucket, columns, rows, format } = props
  return (
    <details className="chart-table">
      <summary>{caption}</summary>
      <table>
        <thead>
          <tr>
            <th scope="col">{bucket === 'hour' ? 'Hour' : 'Day'}</th>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.bucket as string}>
              <th scope="row">{bucketLabel(row.bucket as string, bucket)}</th>
              {columns.map((column) => (
                <td key={column}>{format(row[column])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  )
}
