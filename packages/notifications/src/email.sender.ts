import type { Transporter } from 'nodemailer'
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

/** A plain-text message: notifications, and the accounts' invitation and password reset mails. */
export interface MailMessage {
  to: string
  subject: string
  text: string
}

/** SMTP_URL's server from MAIL_FROM: the one mailer every mail of Tracewell goes through. */
export interface Mailer {
  send(message: MailMessage): Promise<SendOutcome>
  close(): void
}

/** nodemailer is loaded by the first mail sent, not with the module: most processes send none (docs/benchmarks.md#at-rest). */
const smtpTransport = async (settings: EmailSettings, timeoutMs: number): Promise<Transporter> => {
  const { default: nodemailer } = await import('nodemailer')
  return nodemailer.createTransport(settings.smtpUrl, {
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  } as Parameters<typeof nodemailer.createTransport>[1])
}

export function createMailer(settings: EmailSettings, timeoutMs: number): Mailer {
  let transport: Promise<Transporter> | undefined
  return {
    async send(message) {
      transport ??= smtpTransport(settings, timeoutMs)
      const ready = await transport
      const started = performance.now()
      const elapsed = () => Math.round(performance.now() - started)
      try {
        await ready.sendMail({ from: settings.from, ...message })
        return { ok: true, status: 250, error: null, retryable: false, durationMs: elapsed() }
      } catch (error) {
        const { responseCode, code, message: reason } = error as { responseCode?: number; code?: string; message?: string }
        // A 5xx reply is the server's refusal (no such mailbox, relay denied); a 4xx or a dropped
        // connection may pass.
        const status = typeof responseCode === 'number' ? responseCode : null
        const said = status === null ? (code ?? reason ?? 'unknown error') : `${status} ${reason ?? ''}`.trim()
        return { ok: false, status, error: `the mail server did not take the message (${said})`, retryable: status === null || status < 500, durationMs: elapsed() }
      }
    },
    close: () => void transport?.then((ready) => ready.close()),
  }
}

export function createEmailSender(settings: EmailSettings, timeoutMs: number): EmailSender {
  const mailer = createMailer(settings, timeoutMs)
  return {
    send: (address, notification) => mailer.send({ to: address, subject: `[Tracewell] ${headline(notification)}`, text: emailBody(notification) }),
    close: () => mailer.close(),
  }
}
