import '../alerting.css'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useCreateMonitor, useDeleteMonitor, useMonitors, type Monitor } from '../api/monitors.api.ts'
import { useChannels } from '../api/notification-channels.api.ts'
import { MonitorStateBadge } from '../components/monitor-state.tsx'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatAgo } from '../lib/format.ts'
import { describeFilter, formatMetric, formatSeconds, metricLabels } from '../lib/metrics.ts'
import { Can } from '../components/can.tsx'

/** The project's monitors with their state, the value that set it, and the monthly budget shortcut. */
export default function MonitorsPage() {
  const { projectId } = useProject()
  const monitors = useMonitors(projectId)
  const remove = useDeleteMonitor(projectId)
  const alerting = monitors.data?.filter((monitor) => monitor.state === 'alerting').length ?? 0
  return (
    <section className="page" aria-labelledby="monitors-title">
      <div className="page-header">
        <h1 id="monitors-title">Monitors</h1>
        <span className="muted">A metric over a window against a threshold; its channels are told when it starts alerting and when it resolves</span>
        <span className="topbar-spacer" />
        <Can permission="monitors:write">
          <Link className="button primary" to={projectPath('/monitors/new', projectId)}>
            New monitor
          </Link>
        </Can>
      </div>
      {monitors.isPending && <Loading label="Loading the monitors" />}
      {monitors.isError && <ErrorMessage error={monitors.error} what="the monitors" />}
      {monitors.data?.length === 0 && <Empty>No monitor yet: New monitor watches error rate, latency, cost, tokens, scores or judge failures.</Empty>}
      {monitors.data && monitors.data.length > 0 && (
        <>
          <p className="muted" role="status">
            {alerting === 0 ? 'Nothing is alerting.' : `${alerting} of ${monitors.data.length} alerting.`}
          </p>
          <table className="list-table monitors" aria-label="Monitors">
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">Name</th>
                <th scope="col">Condition</th>
                <th scope="col">Value</th>
                <th scope="col">Since</th>
                <th scope="col">Traces</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {monitors.data.map((monitor) => (
                <tr key={monitor.id} className={monitor.state === 'alerting' ? 'alerting' : undefined}>
                  <td>
                    <MonitorStateBadge monitor={monitor} />
                  </td>
                  <td>
                    <Link to={projectPath(`/monitors/${encodeURIComponent(monitor.id)}`, projectId)}>{monitor.name}</Link>
                  </td>
                  <td>{conditionOf(monitor)}</td>
                  <td>{formatMetric(monitor.metric, monitor.lastValue)}</td>
                  <td title={monitor.stateChangedAt ?? undefined}>{monitor.stateChangedAt ? formatAgo(monitor.stateChangedAt) : '—'}</td>
                  <td className="muted small">{describeFilter(monitor.filter)}</td>
                  <td className="actions">
                    <Can permission="monitors:write">
                      <button
                        type="button"
                        className="button small danger"
                        aria-label={`Delete ${monitor.name}`}
                        disabled={remove.isPending}
                        onClick={() => {
                          if (window.confirm(`Delete the monitor ${monitor.name} and its history?`)) remove.mutate(monitor.id)
                        }}
                      >
                        Delete
                      </button>
                    </Can>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {remove.isError && <ErrorMessage error={remove.error} what="the monitor" action="delete" />}
      <MonthlyBudget projectId={projectId} />
    </section>
  )
}

/** "Error rate > 5% over 5 min", "Cost >= $100 this month". */
export function conditionOf(monitor: Pick<Monitor, 'metric' | 'scoreName' | 'operator' | 'threshold' | 'window' | 'windowSeconds'>): string {
  const metric = `${metricLabels[monitor.metric]}${monitor.scoreName ? ` (${monitor.scoreName})` : ''}`
  const window = monitor.window === 'calendar_month' ? 'this month' : `over ${formatSeconds(monitor.windowSeconds ?? 0)}`
  return `${metric} ${monitor.operator} ${formatMetric(monitor.metric, monitor.threshold)} ${window}`
}

/** The project's monthly cost budget: a cost monitor over the calendar month that notifies at 50, 80 and 100 %. */
function MonthlyBudget({ projectId }: { projectId: string }) {
  const create = useCreateMonitor(projectId)
  const channels = useChannels(projectId)
  const [amount, setAmount] = useState('')
  const [channelIds, setChannelIds] = useState<string[]>([])

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate(
      {
        name: `Monthly budget $${Number(amount)}`,
        metric: 'cost',
        scoreName: null,
        filter: {},
        window: 'calendar_month',
        windowSeconds: null,
        operator: '>=',
        threshold: Number(amount),
        evaluateEverySeconds: 300,
        channelIds,
        renotifyAfterSeconds: null,
        mutedUntil: null,
        budgetPercents: [50, 80, 100],
      },
      { onSuccess: () => setAmount('') },
    )
  }

  return (
    <Can permission="monitors:write">
      <form className="card form narrow" onSubmit={submit} aria-labelledby="budget-title">
        <h2 id="budget-title">Monthly budget</h2>
        <p className="muted small hint">The project’s cost this calendar month (UTC), told to the channels at 50, 80 and 100 % of the budget, once each a month.</p>
        <label>
          <span>Budget (US dollars a month)</span>
          <input required inputMode="decimal" value={amount} onChange={(event) => setAmount(event.target.value)} placeholder="500" />
        </label>
        <ChannelChoice channels={channels.data ?? []} chosen={channelIds} onChange={setChannelIds} />
        {create.isError && <ErrorMessage error={create.error} what="the budget" action="set" />}
        {create.isSuccess && (
          <p role="status" className="success">
            Set: {create.data.name}.
          </p>
        )}
        <button type="submit" className="button primary" disabled={create.isPending || !(Number(amount) > 0)}>
          Set budget
        </button>
      </form>
    </Can>
  )
}

/** The channels a monitor notifies, ticked from the project's channels. */
export function ChannelChoice({ channels, chosen, onChange }: { channels: ReadonlyArray<{ id: string; name: string; type: string }>; chosen: string[]; onChange: (ids: string[]) => void }) {
  const { projectId } = useProject()
  return (
    <fieldset className="choices">
      <legend>Notify</legend>
      {channels.length === 0 && (
        <p className="muted small">
          No channel yet: <Link to={projectPath('/channels', projectId)}>add one</Link> to be told.
        </p>
      )}
      {channels.map((channel) => (
        <label key={channel.id} className="checkbox">
          <input type="checkbox" checked={chosen.includes(channel.id)} onChange={(event) => onChange(event.target.checked ? [...chosen, channel.id] : chosen.filter((id) => id !== channel.id))} />
          {channel.name} <span className="muted small">({channel.type})</span>
        </label>
      ))}
    </fieldset>
  )
}
