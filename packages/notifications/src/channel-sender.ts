import { openSecret } from '@tracewell/auth'
import type { Outbound } from '@tracewell/outbound'
import { createEmailSender, type EmailSender, type EmailSettings } from './email.sender.ts'
import type { Notification } from './notification.ts'
import type { SendOutcome } from './send-outcome.ts'
import { sendSlack } from './slack.sender.ts'
import { sendWebhook } from './webhook.sender.ts'

// One way to send a notification to any channel, shared by the delivery worker and the control
// plane's test endpoint. Every HTTP call goes through the outbound guard, whose connector checks
// the address again at each delivery (a name that now resolves inward is refused then).

/** A channel as stored: its webhook secret sealed with LLM_CONNECTION_ENCRYPTION_KEY. */
export interface StoredChannel {
  projectId: string
  type: 'webhook' | 'slack' | 'email'
  url: string | null
  address: string | null
  secretSealed: string | null
}

export interface ChannelSenderOptions {
  outbound: Outbound
  /** NOTIFICATION_TIMEOUT_MS: one try, from connecting to the reply's end, at most. */
  timeoutMs: number
  /** SMTP_URL and MAIL_FROM; without them email channels fail (retryably: the setting may come). */
  email: EmailSettings | undefined
  /** LLM_CONNECTION_ENCRYPTION_KEY's 32 bytes, which open webhook secrets. */
  encryptionKey: Buffer | undefined
  /** The context a project's channel secrets are sealed with. */
  secretContext: (projectId: string) => string
}

export interface ChannelSender {
  /** `deliveryId` goes with a webhook (x-tracewell-delivery), for receivers that skip what they saw. */
  send(channel: StoredChannel, notification: Notification, deliveryId: string): Promise<SendOutcome>
  close(): void
}

const failure = (error: string, retryable: boolean): SendOutcome => ({ ok: false, status: null, error, retryable, durationMs: 0 })

export function createChannelSender(options: ChannelSenderOptions): ChannelSender {
  const fetch = options.outbound.fetchWithin(options.timeoutMs)
  let email: EmailSender | undefined
  return {
    async send(channel, notification, deliveryId) {
      switch (channel.type) {
        case 'webhook': {
          if (options.encryptionKey === undefined) return failure('webhooks need LLM_CONNECTION_ENCRYPTION_KEY set, to open their signing secrets', true)
          let secret: string
          try {
            secret = openSecret(channel.secretSealed ?? '', options.encryptionKey, options.secretContext(channel.projectId))
          } catch {
            return failure('the webhook’s secret does not open with this LLM_CONNECTION_ENCRYPTION_KEY (was the key changed?)', false)
          }
          return sendWebhook(fetch, channel.url ?? '', secret, notification, deliveryId)
        }
        case 'slack':
          return sendSlack(fetch, channel.url ?? '', notification)
        case 'email':
          if (options.email === undefined) return failure('email needs SMTP_URL and MAIL_FROM set on the server', true)
          email ??= createEmailSender(options.email, options.timeoutMs)
          return email.send(channel.address ?? '', notification)
      }
    },
    close: () => email?.close(),
  }
}
