// What a channel is told: the webhook body as it is sent (docs/api.md#notification-channels), from
// which the Slack and email messages are written too. A delivery stores it as it was when the event
// happened, so the message a retry sends is the one the first try sent.

export interface Notification {
  monitor: { id: string; name: string }
  /** alerting, no_data, or resolved when the monitor is back to ok; test for a test message. */
  state: string
  /** What happened: alerting, resolved, no_data, renotify (still alerting), budget (a step of a monthly budget), test. */
  event: string
  value: number | null
  threshold: number | null
  window: { from: string; to: string }
  /** The console's view of the traces that matched: absolute with PUBLIC_URL, else a path on the console. */
  url: string
}

/** A console path (`/traces?…`) as a link: on PUBLIC_URL when it is set, else the path alone. */
export function consoleLink(publicUrl: string | undefined, path: string): string {
  return publicUrl === undefined ? path : `${publicUrl.replace(/\/+$/, '')}${path}`
}

/** What POST /api/notification-channels/:id/test sends: a notification no monitor made, about the last five minutes. */
export function testNotification(projectId: string, publicUrl: string | undefined, now = new Date()): Notification {
  const from = new Date(now.getTime() - 5 * 60_000).toISOString()
  const to = now.toISOString()
  const query = new URLSearchParams({ project_id: projectId, from, to })
  return {
    monitor: { id: 'test', name: 'Test notification from Tracewell' },
    state: 'test',
    event: 'test',
    value: null,
    threshold: null,
    window: { from, to },
    url: consoleLink(publicUrl, `/traces?${query.toString()}`),
  }
}

const stateWords: Record<string, string> = {
  alerting: 'is alerting',
  resolved: 'has resolved',
  no_data: 'has no data',
  renotify: 'is still alerting',
  budget: 'has reached a budget step',
  test: 'is a test: this channel works',
}

/** One line that says what happened, for Slack's fallback text and the email's subject. */
export function headline(notification: Notification): string {
  const words = stateWords[notification.event] ?? `is ${notification.state}`
  const figures = notification.value === null ? '' : `: value ${notification.value}${notification.threshold === null ? '' : `, threshold ${notification.threshold}`}`
  return `Monitor "${notification.monitor.name}" ${words}${figures}`
}

/** A monitor event as the outbox reads it (@tracewell/db dispatchMonitorEvents). */
export interface MonitorEventInput {
  projectId: string
  monitorId: string
  monitorName: string
  metric: string
  /** The monitor's filter: GET /api/traces's parameters, which the console's trace list reads too. */
  filter: object
  kind: string
  state: string
  value: number | null
  threshold: number
  windowFrom: Date
  windowTo: Date
}

/** The notification of a monitor event, its link the console's trace list over the event's window and the monitor's filter. */
export function monitorEventNotification(event: MonitorEventInput, publicUrl: string | undefined): Notification {
  const from = event.windowFrom.toISOString()
  const to = event.windowTo.toISOString()
  const query = new URLSearchParams({ project_id: event.projectId, from, to })
  for (const [name, value] of Object.entries(event.filter)) {
    if (Array.isArray(value)) for (const item of value) query.append(name, String(item))
    else if (value !== undefined && value !== null) query.set(name, String(value))
  }
  // An error-rate monitor's traces of interest are the failed ones.
  if (event.metric === 'error_rate' && !query.has('status')) query.set('status', 'error')
  return {
    monitor: { id: event.monitorId, name: event.monitorName },
    state: event.kind === 'resolved' ? 'resolved' : event.state,
    event: event.kind,
    value: event.value,
    threshold: event.threshold,
    window: { from, to },
    url: consoleLink(publicUrl, `/traces?${query.toString()}`),
  }
}

/**
 * A stored payload as the notification it is, its fields in the documented order (jsonb keeps
 * keys in an order of its own, and the webhook body should read as the docs show it).
 */
export function storedNotification(payload: Record<string, unknown>): Notification {
  const { monitor, state, event, value, threshold, window, url } = payload as unknown as Notification
  return { monitor: { id: monitor.id, name: monitor.name }, state, event, value, threshold, window: { from: window.from, to: window.to }, url }
}
