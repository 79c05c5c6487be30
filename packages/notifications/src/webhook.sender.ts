import type { OutboundFetch } from '@tracewell/outbound'
import type { Notification } from './notification.ts'
import { httpOutcome, unansweredOutcome, type SendOutcome } from './send-outcome.ts'
import { signatureHeaderName, signWebhookBody } from './signature.ts'

/** POSTs the notification as JSON, signed with the channel's secret; only the status of the reply is read. */
/** The delivery's id, the same on every try of it: a receiver that saw it already can skip it. */
export const deliveryHeaderName = 'x-tracewell-delivery'

export async function sendWebhook(fetch: OutboundFetch, url: string, secret: string, notification: Notification, deliveryId: string): Promise<SendOutcome> {
  const body = JSON.stringify(notification)
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Tracewell-Webhooks', [signatureHeaderName]: signWebhookBody(body, secret), [deliveryHeaderName]: deliveryId },
      body,
    })
    await response.body?.cancel()
    return httpOutcome(response.status, elapsed())
  } catch (error) {
    return unansweredOutcome(error, elapsed())
  }
}
