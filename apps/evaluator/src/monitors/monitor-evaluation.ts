import { breachesThreshold, metricValue, type DueMonitor, type Executor, type MonitorEvaluation, type MonitorEventDraft, type MonitorState } from '@tracewell/db'

// One evaluation of a monitor (issue 45 §1): its metric over the window ending now, its state by
// the threshold, and the events that state calls for. What is notified:
//   - alerting: whenever it starts;
//   - resolved, or no data, after alerting (the alert is over, or can no longer be judged);
//   - renotify: every renotifyAfterSeconds while it stays alerting;
//   - budget: each step of a budget (but 100 %, which is the alert itself), once a month.
// Other changes (ok ↔ no data) are recorded in the history without a message; a muted monitor
// records every change and notifies none.

export function monitorWindow(monitor: Pick<DueMonitor, 'window' | 'windowSeconds'>, now: Date): { from: Date; to: Date } {
  if (monitor.window === 'calendar_month') return { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), to: now }
  return { from: new Date(now.getTime() - (monitor.windowSeconds ?? 0) * 1000), to: now }
}

/** The state and events of a monitor whose metric is `value` at `now` (pure: what the evaluator writes). */
export function decideMonitor(monitor: DueMonitor, value: number | null, now: Date): Omit<MonitorEvaluation, 'window'> {
  const state: MonitorState = value === null ? 'no_data' : breachesThreshold(value, monitor.operator, monitor.threshold) ? 'alerting' : 'ok'
  const muted = monitor.mutedUntil !== null && Date.parse(monitor.mutedUntil) > now.getTime()
  const to = (notify: boolean) => (notify && !muted ? monitor.channelIds : [])
  const events: MonitorEventDraft[] = []
  if (state !== monitor.state) {
    const kind = state === 'alerting' ? 'alerting' : state === 'ok' ? 'resolved' : 'no_data'
    events.push({ kind, value, threshold: monitor.threshold, channelIds: to(state === 'alerting' || monitor.state === 'alerting') })
  } else if (state === 'alerting' && monitor.renotifyAfterSeconds !== null && !muted) {
    const since = monitor.lastNotifiedAt?.getTime() ?? Date.parse(monitor.stateChangedAt ?? monitor.createdAt)
    if (now.getTime() - since >= monitor.renotifyAfterSeconds * 1000) events.push({ kind: 'renotify', value, threshold: monitor.threshold, channelIds: monitor.channelIds })
  }
  const budget = budgetStep(monitor, value, now)
  if (budget !== undefined && budget.percent !== 100) {
    events.push({ kind: 'budget', value, threshold: (monitor.threshold * budget.percent) / 100, channelIds: to(true) })
  }
  return { value, state, events, budget }
}

/** The highest budget step the month's value has reached, when it is past the one notified this month. */
function budgetStep(monitor: DueMonitor, value: number | null, now: Date): { month: string; percent: number } | undefined {
  if (monitor.window !== 'calendar_month' || monitor.budgetPercents === null || value === null) return undefined
  const month = now.toISOString().slice(0, 7)
  const notified = monitor.budgetMonth === month ? (monitor.budgetNotifiedPercent ?? 0) : 0
  const reached = Math.max(0, ...monitor.budgetPercents.filter((percent) => value >= (monitor.threshold * percent) / 100))
  return reached > notified ? { month, percent: reached } : undefined
}

/** Evaluates a claimed monitor: its metric over its window, read from the rollups and summaries. */
export async function evaluateMonitor(db: Executor, monitor: DueMonitor, now: Date): Promise<MonitorEvaluation> {
  const window = monitorWindow(monitor, now)
  const value =
    window.to > window.from
      ? await metricValue(db, { projectId: monitor.projectId, metric: monitor.metric, scoreName: monitor.scoreName ?? undefined, filter: monitor.filter, ...window })
      : null
  return { ...decideMonitor(monitor, value, now), window }
}
