import { lazy, Suspense, useMemo } from 'react'
import { Link, useSearchParams } from 'react-router'
import { useUsage, type UsageQuery } from '../api/usage.api.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { OwnCallsSwitch, useOwnCallsParam } from '../components/own-calls-switch.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatCost, formatCount, formatDuration } from '../lib/format.ts'
import { timeRanges, type TimeRange } from '../lib/trace-filters.ts'
import { bucketStarts } from '../lib/usage-series.ts'
import { SummariesLag } from '../components/summaries-lag.tsx'

// The charting library is the console's largest dependency: it loads with this page only.
const UsageCharts = lazy(() => import('../components/usage-charts.tsx'))

const groupings = ['', 'model', 'vendor', 'service', 'user'] as const
const ranges: TimeRange[] = ['24h', '7d', '30d']

export default function UsagePage() {
  const { projectId } = useProject()
  const [params, setParams] = useSearchParams()
  const range = ranges.includes(params.get('range') as TimeRange) ? (params.get('range') as TimeRange) : '7d'
  const bucket = params.get('bucket') === 'hour' || (params.get('bucket') === null && range === '24h') ? 'hour' : 'day'
  const groupParam = params.get('group_by')
  const groupBy = groupings.includes(groupParam as (typeof groupings)[number]) && groupParam !== '' ? (groupParam as UsageQuery['groupBy']) : undefined
  // Fixed when the range is chosen, so the query key stays put while the page is open.
  const from = useMemo(() => new Date(Date.now() - timeRanges[range]).toISOString(), [range])
  const [ownCalls, setOwnCalls] = useOwnCallsParam()
  const usage = useUsage(projectId, { from, bucket, groupBy, includeTracewellCalls: ownCalls })
  // The window the answer covers: from `from` to when the server was asked (its default `to`).
  const buckets = useMemo(() => bucketStarts(new Date(from), new Date(usage.dataUpdatedAt || Date.now()), bucket), [from, bucket, usage.dataUpdatedAt])

  const setParam = (name: string, value: string) => {
    const next = new URLSearchParams(params)
    if (value === '') next.delete(name)
    else next.set(name, value)
    setParams(next)
  }

  const totals = usage.data?.totals
  return (
    <section className="page" aria-labelledby="usage-title">
      <div className="page-header">
        <h1 id="usage-title">Usage</h1>
        <OwnCallsSwitch on={ownCalls} onChange={setOwnCalls} />
        <SummariesLag projectId={projectId} />
      </div>
      <form className="filters" aria-label="Usage options" onSubmit={(event) => event.preventDefault()}>
        <div className="filter-row">
          <label>
            <span>Time</span>
            <select value={range} onChange={(event) => setParam('range', event.target.value)}>
              <option value="24h">Last 24 hours</option>
              <option value="7d">Last 7 days</option>
              <option value="30d">Last 30 days</option>
            </select>
          </label>
          <label>
            <span>Per</span>
            <select value={bucket} onChange={(event) => setParam('bucket', event.target.value)}>
              <option value="hour">Hour</option>
              <option value="day">Day</option>
            </select>
          </label>
          <label>
            <span>Split by</span>
            <select value={groupBy ?? ''} onChange={(event) => setParam('group_by', event.target.value)}>
              <option value="">Nothing</option>
              <option value="model">Model</option>
              <option value="vendor">Vendor</option>
              <option value="service">Service</option>
              <option value="user">User</option>
            </select>
          </label>
        </div>
      </form>
      {usage.isError && <ErrorMessage error={usage.error} what="usage" />}
      {usage.isPending && <Loading label="Loading usage" />}
      {totals && (
        <dl className="totals" aria-label="Totals over the period">
          <div className="card">
            <dt>Cost</dt>
            <dd>{formatCost(totals.costUsd)}</dd>
          </div>
          <div className="card">
            <dt>Tokens in / out</dt>
            <dd>
              {formatCount(totals.inputTokens)} / {formatCount(totals.outputTokens)}
            </dd>
          </div>
          <div className="card">
            <dt>Traces</dt>
            <dd>{formatCount(totals.traces)}</dd>
          </div>
          <div className="card">
            {/* The rollups count spans; the trace list's filter counts traces: each is named. */}
            <dt>Spans with an error</dt>
            <dd className={totals.errors > 0 ? 'error-text' : undefined}>{formatCount(totals.errors)}</dd>
            <dd className="totals-link">
              <Link to={projectPath('/traces', projectId, { status: 'error', range })}>Traces with an error →</Link>
            </dd>
          </div>
          <div className="card">
            <dt>LLM call latency p50 / p95</dt>
            <dd>
              {formatDuration(totals.latencyP50Ms)} / {formatDuration(totals.latencyP95Ms)}
            </dd>
          </div>
        </dl>
      )}
      {usage.data && (
        <Suspense fallback={<Loading label="Loading the charts" />}>
          <UsageCharts series={usage.data.series} bucket={bucket} buckets={buckets} grouped={groupBy !== undefined} scores={usage.data.scores?.series} />
        </Suspense>
      )}
    </section>
  )
}
