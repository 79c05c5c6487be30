// What a channel is told: the webhook body as it is sent (docs/api.md#notification-channels), from
// which the Slack and email messages are written too. A delivery stores it as it was when the event
// happened, so the message a retry sends is the one the first try sent.

export interface Notification {
  monitor: { id: string; name: string }
  /** alerting, resolved, no_data, renotify (still alerting), budget; test for a test message. */
  state: string
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
  const words = stateWords[notification.state] ?? `is ${notification.state}`
  const figures = notification.value === null ? '' : `: value ${notification.value}${notification.threshold === null ? '' : `, threshold ${notification.threshold}`}`
  return `Monitor "${notification.monitor.name}" ${words}${figures}`
}
