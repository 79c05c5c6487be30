import type { OutboundFetch } from '@tracewell/outbound'
import { headline, type Notification } from './notification.ts'
import { httpOutcome, unansweredOutcome, type SendOutcome } from './send-outcome.ts'

// A Slack incoming-webhook message (https://api.slack.com/messaging/webhooks): `text` is what
// notifications and clients without blocks show; the blocks give the figures and the link to the
// traces. Slack only links absolute URLs: without PUBLIC_URL the console path is shown as text.

interface SlackText {
  type: 'mrkdwn' | 'plain_text'
  text: string
}

export interface SlackMessage {
  text: string
  blocks: Array<Record<string, unknown>>
}

// Slack's mrkdwn treats these three as markup (https://api.slack.com/reference/surfaces/formatting#escaping).
const escaped = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
const mrkdwn = (text: string): SlackText => ({ type: 'mrkdwn', text })
const absolute = (url: string) => /^https?:\/\//.test(url)

export function slackMessage(notification: Notification): SlackMessage {
  const fields = [
    mrkdwn(`*State*\n${escaped(notification.state)}`),
    mrkdwn(`*Value*\n${notification.value ?? '–'}`),
    mrkdwn(`*Threshold*\n${notification.threshold ?? '–'}`),
    mrkdwn(`*Window*\n${notification.window.from} – ${notification.window.to}`),
  ]
  const blocks: Array<Record<string, unknown>> = [
    { type: 'section', text: mrkdwn(`*${escaped(headline(notification))}*`) },
    { type: 'section', fields },
  ]
  if (absolute(notification.url)) {
    blocks.push({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the traces' }, url: notification.url }] })
  } else {
    blocks.push({ type: 'context', elements: [mrkdwn(`Traces: ${escaped(notification.url)} on the Tracewell console`)] })
  }
  return { text: `${headline(notification)}: ${notification.url}`, blocks }
}

export async function sendSlack(fetch: OutboundFetch, url: string, notification: Notification): Promise<SendOutcome> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(slackMessage(notification)) })
    await response.body?.cancel()
    return httpOutcome(response.status, elapsed())
  } catch (error) {
    return unansweredOutcome(error, elapsed())
  }
}
