import nodemailer from 'nodemailer'
import { headline, type Notification } from './notification.ts'
import type { SendOutcome } from './send-outcome.ts'

// Email over SMTP_URL (smtp:// or smtps://user:pass@host:port), from MAIL_FROM, with nodemailer.
// SMTP is no HTTP call: the outbound guard does not apply; the server is the operator's own
// choice, not a project's. Each stage of the SMTP conversation is bounded by the send timeout.

export interface EmailSettings {
  smtpUrl: string
  from: string
}

export interface EmailSender {
  send(address: string, notification: Notification): Promise<SendOutcome>
  close(): void
}

export function emailBody(notification: Notification): string {
  return [
    headline(notification),
    '',
    `State: ${notification.state}`,
    `Value: ${notification.value ?? '–'}`,
    `Threshold: ${notification.threshold ?? '–'}`,
    `Window: ${notification.window.from} – ${notification.window.to}`,
    '',
    `The traces: ${notification.url}`,
  ].join('\n')
}

export function createEmailSender(settings: EmailSettings, timeoutMs: number): EmailSender {
  const transport = nodemailer.createTransport(settings.smtpUrl, {
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  } as Parameters<typeof nodemailer.createTransport>[1])
  return {
    async send(address, notification) {
      const started = performance.now()
      const elapsed = () => Math.round(performance.now() - started)
      try {
        await transport.sendMail({ from: settings.from, to: address, subject: `[Tracewell] ${headline(notification)}`, text: emailBody(notification) })
        return { ok: true, status: 250, error: null, retryable: false, durationMs: elapsed() }
      } catch (error) {
        const { responseCode, code, message } = error as { responseCode?: number; code?: string; message?: string }
        // A 5xx reply is the server's refusal (no such mailbox, relay denied); a 4xx or a dropped
        // connection may pass.
        const status = typeof responseCode === 'number' ? responseCode : null
        const reason = status === null ? (code ?? message ?? 'unknown error') : `${status} ${message ?? ''}`.trim()
        return { ok: false, status, error: `the mail server did not take the message (${reason})`, retryable: status === null || status < 500, durationMs: elapsed() }
      }
    },
    close: () => transport.close(),
  }
}
