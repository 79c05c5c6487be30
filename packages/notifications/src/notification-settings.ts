import type { EmailSettings } from './email.sender.ts'

/** The notification settings of a service, as createChannelSender and the routes take them. */
export interface NotificationSettings {
  /** SMTP_URL with MAIL_FROM; undefined unless both are set. */
  email: EmailSettings | undefined
  /** PUBLIC_URL. */
  publicUrl: string | undefined
  /** NOTIFICATION_TIMEOUT_MS. */
  timeoutMs: number
}

interface SettingsWithNotifications {
  SMTP_URL?: string | undefined
  MAIL_FROM?: string | undefined
  PUBLIC_URL?: string | undefined
  NOTIFICATION_TIMEOUT_MS: number
}

export const notificationSettingsOf = (settings: SettingsWithNotifications): NotificationSettings => ({
  email: settings.SMTP_URL !== undefined && settings.MAIL_FROM !== undefined ? { smtpUrl: settings.SMTP_URL, from: settings.MAIL_FROM } : undefined,
  publicUrl: settings.PUBLIC_URL,
  timeoutMs: settings.NOTIFICATION_TIMEOUT_MS,
})
