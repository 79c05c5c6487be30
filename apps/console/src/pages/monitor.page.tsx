import { Can } from '../components/can.tsx'
import '../alerting.css'
import { useState, type FormEvent } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { useCreateMonitor, useMetricPreview, useMonitor, useMonitorHistory, useUpdateMonitor, type Monitor, type MonitorOperator, type MonitorSettings } from '../api/monitors.api.ts'
import { useChannels } from '../api/notification-channels.api.ts'
import { MetricChart } from '../components/metric-chart.tsx'
import { MonitorStateBadge } from '../components/monitor-state.tsx'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { TraceFilterForm } from '../components/trace-filter-form.tsx'
import { useDebounced } from '../lib/debounced.ts'
import { formatTime } from '../lib/format.ts'
import { isoOf, localInput } from '../lib/local-time.ts'
import { describeFilter, formatMetric, formatSeconds, metricFilterOf, metricLabels, monitorMetrics, thresholdHint, traceFiltersOf, type MonitorMetric } from '../lib/metrics.ts'
import { ChannelChoice, conditionOf } from './monitors.page.tsx'

const windowChoices = [60, 300, 900, 1_800, 3_600, 6 * 3_600, 86_400]
const everyChoices = [10, 30, 60, 300, 900]
const renotifyChoices = [0, 900, 3_600, 4 * 3_600, 86_400]
const operators: MonitorOperator[] = ['>', '>=', '<', '<=']

const newMonitor: MonitorSettings = {
  name: '',
  metric: 'error_rate',
  scoreName: null,
  filter: {},
  window: 'rolling',
  windowSeconds: 300,
  operator: '>',
  threshold: 0.05,
  evaluateEverySeconds: 60,
  channelIds: [],
  renotifyAfterSeconds: null,
  mutedUntil: null,
  budgetPercents: null,
}

/** One monitor: made or changed here, with its metric over the last day against the threshold, and its history. */
export default function MonitorPage() {
  const { projectId } = useProject()
  const { monitorId } = useParams()
  const isNew = monitorId === 'new'
  const monitor = useMonitor(projectId, isNew ? undefined : monitorId)
  if (!isNew && monitor.isPending) return <Loading label="Loading the monitor" />
  if (!isNew && monitor.isError) return <ErrorMessage error={monitor.error} what="the monitor" />
  return <MonitorEditor key={monitor.data?.id ?? 'new'} projectId={projectId} monitor={isNew ? undefined : monitor.data} />
}

function settingsOf(monitor: Monitor): MonitorSettings {
  const { name, metric, scoreName, filter, window, windowSeconds, operator, threshold, evaluateEverySeconds, channelIds, renotifyAfterSeconds, mutedUntil, budgetPercents } = monitor
  return { name, metric, scoreName, filter, window, windowSeconds, operator, threshold, evaluateEverySeconds, channelIds, renotifyAfterSeconds, mutedUntil, budgetPercents }
}

function MonitorEditor({ projectId, monitor }: { projectId: string; monitor: Monitor | undefined }) {
  const navigate = useNavigate()
  const channels = useChannels(projectId)
  const create = useCreateMonitor(projectId)
  const update = useUpdateMonitor(projectId, monitor?.id ?? '')
  const [draft, setDraft] = useState<MonitorSettings>(() => (monitor ? settingsOf(monitor) : newMonitor))
  const [threshold, setThreshold] = useState(String(draft.threshold))
  const [filters, setFilters] = useState(() => traceFiltersOf(draft.filter))
  const set = <K extends keyof MonitorSettings>(key: K, value: MonitorSettings[K]) => setDraft((current) => ({ ...current, [key]: value }))
  const saving = create.isPending || update.isPending
  const saveError = create.error ?? update.error
  const thresholdValue = Number(threshold)

  function submit(event: FormEvent) {
    event.preventDefault()
    const body: MonitorSettings = {
      ...draft,
      name: draft.name.trim(),
      threshold: thresholdValue,
      filter: metricFilterOf(filters),
      scoreName: draft.metric === 'score_avg' ? draft.scoreName?.trim() || null : null,
    }
    if (monitor) update.mutate(body)
    else create.mutate(body, { onSuccess: (made) => navigate(projectPath(`/monitors/${encodeURIComponent(made.id)}`, projectId), { replace: true }) })
  }

  return (
    <section className="page" aria-labelledby="monitor-title">
      <div className="page-header">
        <Link className="back" to={projectPath('/monitors', projectId)}>
          ← Monitors
        </Link>
        <h1 id="monitor-title">{monitor ? monitor.name : 'New monitor'}</h1>
        {monitor && <MonitorStateBadge monitor={monitor} />}
        {monitor && (
          <span className="muted">
            {conditionOf(monitor)} · now {formatMetric(monitor.metric, monitor.lastValue)}
            {monitor.lastEvaluatedAt && `, evaluated ${formatTime(monitor.lastEvaluatedAt)}`}
          </span>
        )}
      </div>
      <div className="monitor-layout">
        <div className="card monitor-form">
          <form id="monitor-form" className="form" onSubmit={submit}>
            <label>
              <span>Name</span>
              <input required value={draft.name} onChange={(event) => set('name', event.target.value)} placeholder="Answers failing" />
            </label>
            <div className="inline-fields">
              <label>
                <span>Metric</span>
                <select value={draft.metric} disabled={draft.window === 'calendar_month'} onChange={(event) => set('metric', event.target.value as MonitorMetric)}>
                  {monitorMetrics.map((metric) => (
                    <option key={metric} value={metric}>
                      {metricLabels[metric]}
                    </option>
                  ))}
                </select>
              </label>
              {draft.metric === 'score_avg' && (
                <label>
                  <span>Score name</span>
                  <input required value={draft.scoreName ?? ''} onChange={(event) => set('scoreName', event.target.value)} placeholder="helpfulness" />
                </label>
              )}
              <label>
                <span>Over the last</span>
                {draft.window === 'calendar_month' ? (
                  <input value="calendar month" disabled />
                ) : (
                  <select value={draft.windowSeconds ?? 300} onChange={(event) => set('windowSeconds', Number(event.target.value))}>
                    {withCurrent(windowChoices, draft.windowSeconds).map((seconds) => (
                      <option key={seconds} value={seconds}>
                        {formatSeconds(seconds)}
                      </option>
                    ))}
                  </select>
                )}
              </label>
            </div>
            <div className="inline-fields">
              <label>
                <span>Alert when the value is</span>
                <select value={draft.operator} onChange={(event) => set('operator', event.target.value as MonitorOperator)}>
                  {operators.map((operator) => (
                    <option key={operator} value={operator}>
                      {operator}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                <span>Threshold</span>
                <input required inputMode="decimal" value={threshold} onChange={(event) => setThreshold(event.target.value)} aria-describedby="threshold-hint" />
              </label>
              <span id="threshold-hint" className="muted small field-hint">
                {thresholdHint(draft.metric)}
                {Number.isFinite(thresholdValue) && threshold !== '' ? ` (${formatMetric(draft.metric, thresholdValue)})` : ''}
              </span>
            </div>
            <div className="inline-fields">
              <label>
                <span>Evaluate every</span>
                <select value={draft.evaluateEverySeconds} onChange={(event) => set('evaluateEverySeconds', Number(event.target.value))}>
                  {withCurrent(everyChoices, draft.evaluateEverySeconds).map((seconds) => (
                    <option key={seconds} value={seconds}>
                      {formatSeconds(seconds)}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                <span>Remind while alerting</span>
                <select value={draft.renotifyAfterSeconds ?? 0} onChange={(event) => set('renotifyAfterSeconds', Number(event.target.value) || null)}>
                  {withCurrent(renotifyChoices, draft.renotifyAfterSeconds).map((seconds) => (
                    <option key={seconds} value={seconds}>
                      {seconds === 0 ? 'never' : `every ${formatSeconds(seconds)}`}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                <span>Muted until</span>
                <input type="datetime-local" value={localInput(draft.mutedUntil ?? undefined)} onChange={(event) => set('mutedUntil', isoOf(event.target.value) ?? null)} />
              </label>
              {draft.mutedUntil && (
                <button type="button" className="button small field-button" onClick={() => set('mutedUntil', null)}>
                  Unmute
                </button>
              )}
            </div>
            <ChannelChoice channels={channels.data ?? []} chosen={draft.channelIds} onChange={(ids) => set('channelIds', ids)} />
          </form>
          <h2 className="subheading">Which traces</h2>
          <TraceFilterForm filters={filters} onApply={setFilters} scope label="Which traces the monitor counts" />
          <div className="form-actions">
            <Can permission="monitors:write">
              <button type="submit" form="monitor-form" className="button primary" disabled={saving || draft.name.trim() === '' || threshold.trim() === '' || !Number.isFinite(thresholdValue)}>
                {monitor ? 'Save monitor' : 'Create monitor'}
              </button>
            </Can>
            {saveError && <ErrorMessage error={saveError} what="the monitor" action="save" />}
            {update.isSuccess && !saving && (
              <span role="status" className="success">
                Saved.
              </span>
            )}
          </div>
        </div>
        <div className="monitor-side">
          <Preview projectId={projectId} settings={{ ...draft, filter: metricFilterOf(filters) }} threshold={Number.isFinite(thresholdValue) && threshold !== '' ? thresholdValue : undefined} />
          {monitor && <History projectId={projectId} monitor={monitor} />}
        </div>
      </div>
    </section>
  )
}

/** The choices, with the current value among them when it is not one of them. */
function withCurrent(choices: number[], current: number | null): number[] {
  return current === null || current === 0 || choices.includes(current) ? choices : [...choices, current].sort((a, b) => a - b)
}

/** The metric over the last day as the monitor would see it, against the threshold. */
function Preview({ projectId, settings, threshold }: { projectId: string; settings: MonitorSettings; threshold: number | undefined }) {
  const settled = useDebounced(
    {
      metric: settings.metric,
      scoreName: settings.metric === 'score_avg' ? settings.scoreName?.trim() || null : null,
      filter: settings.filter,
      window: settings.window,
      windowSeconds: settings.windowSeconds,
      operator: settings.operator,
      threshold: threshold ?? Number.NaN,
    },
    400,
  )
  const ready = settled.metric !== 'score_avg' || settled.scoreName !== null
  const query = ready ? settled : null
  const preview = useMetricPreview(projectId, query)
  return (
    <figure className="card chart monitor-preview">
      <figcaption>
        {metricLabels[settings.metric]} {settings.window === 'calendar_month' ? 'this month, day by day' : 'over the last day'} <span className="muted small">· {describeFilter(settings.filter)}</span>
      </figcaption>
      {!ready && <p className="muted small">Name the score to see its average.</p>}
      {preview.isError && <ErrorMessage error={preview.error} what="the preview" />}
      {preview.data && <MetricChart metric={settings.metric} chart="line" data={preview.data} height={220} threshold={threshold} caption="The metric over the last day" />}
      {ready && preview.isPending && <p className="muted small">Loading…</p>}
    </figure>
  )
}

const eventLabels = { alerting: 'started alerting', resolved: 'resolved', no_data: 'nothing to measure', renotify: 'still alerting (reminder)', budget: 'budget step reached' } as const

/** The monitor's state changes, newest first, with the value that made each. */
function History({ projectId, monitor }: { projectId: string; monitor: Monitor }) {
  const history = useMonitorHistory(projectId, monitor.id)
  return (
    <section className="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {history.isPending && <Loading label="Loading the history" />}
      {history.isError && <ErrorMessage error={history.error} what="the history" />}
      {history.data?.length === 0 && <p className="muted">No change yet: the monitor has been {monitor.state === 'ok' ? 'ok' : monitor.state} since it was made.</p>}
      {history.data && history.data.length > 0 && (
        <table className="list-table history" aria-label="State changes">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Value</th>
              <th scope="col">Window</th>
            </tr>
          </thead>
          <tbody>
            {history.data.map((event) => (
              <tr key={event.id}>
                <td>{formatTime(event.createdAt)}</td>
                <td>
                  <MonitorStateBadge monitor={{ state: event.state, mutedUntil: null }} /> {eventLabels[event.kind]}
                </td>
                <td>
                  {formatMetric(monitor.metric, event.value)} <span className="muted small">(threshold {formatMetric(monitor.metric, event.threshold)})</span>
                </td>
                <td className="small">
                  <Link to={tracesOfWindow(projectId, monitor, event.window)}>traces</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/** The trace list of the traces the monitor counted in one window: its filter, that window. */
function tracesOfWindow(projectId: string, monitor: Monitor, window: { from: string; to: string }): string {
  const params = new URLSearchParams({ project_id: projectId, from: window.from, to: window.to })
  for (const [key, value] of Object.entries(monitor.filter)) {
    if (Array.isArray(value)) for (const pair of value) params.append(key, String(pair))
    else if (value !== undefined) params.set(key, String(value))
  }
  return `/traces?${params.toString()}`
}
