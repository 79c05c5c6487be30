import type { MailMessage } from '@tracewell/notifications'

// The accounts' mails, plain text, sent through @tracewell/notifications' mailer (SMTP_URL from
// MAIL_FROM). They say who asked, what the link does, and until when.

// Made with the first mail: the first Intl object of a process pages in ~5 MiB of Node's ICU
// data, which an idle control plane would otherwise hold (docs/benchmarks.md#at-rest).
let whenFormat: Intl.DateTimeFormat | undefined
const when = (date: Date | string) => `${(whenFormat ??= new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' })).format(new Date(date))} UTC`

export function invitationMail(to: string, invitation: { teamName: string; inviterName: string | null; role: string; url: string; expiresAt: string }): MailMessage {
  const who = invitation.inviterName ?? 'An admin'
  return {
    to,
    subject: `[Tracewell] ${who} invited you to ${invitation.teamName}`,
    text: [
      `${who} invited you to join the team ${invitation.teamName} on Tracewell as ${invitation.role}.`,
      '',
      `Accept the invitation: ${invitation.url}`,
      '',
      `The link works once, until ${when(invitation.expiresAt)}. If you did not expect it, ignore this mail.`,
    ].join('\n'),
  }
}

export function passwordResetMail(to: string, reset: { url: string; expiresAt: Date }): MailMessage {
  return {
    to,
    subject: '[Tracewell] Reset your password',
    text: [
      'Someone (we hope you) asked to reset the password of your Tracewell account.',
      '',
      `Choose a new password: ${reset.url}`,
      '',
      `The link works once, until ${when(reset.expiresAt)}; setting a new password signs you out everywhere.`,
      'If you did not ask, ignore this mail: your password stays as it is.',
    ].join('\n'),
  }
}
