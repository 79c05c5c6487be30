import { randomBytes } from 'node:crypto'
import { sealSecret } from '@tracewell/auth'
import { notificationChannelSecretContext, type NotificationChannelFields, type SealedNotificationChannel } from '@tracewell/db'
import { BadRequestError, ServiceUnavailableError } from '@tracewell/http'
import { BaseUrlError, type Outbound } from '@tracewell/outbound'
import type { NotificationChannelBody } from '@tracewell/api-schemas'

// A channel's body checked and turned into what is stored: the fields its type needs and no
// other, the URL checked by the outbound guard as it is saved, a webhook's secret sealed.

export interface ChannelFieldsOptions {
  outbound: Outbound
  /** LLM_CONNECTION_ENCRYPTION_KEY's 32 bytes: webhook secrets are sealed with it. */
  encryptionKey: Buffer | undefined
  /** Whether SMTP_URL and MAIL_FROM are set. */
  emailConfigured: boolean
}

export interface CheckedChannel {
  fields: NotificationChannelFields
  /** The secret to answer once: set by the caller or made now. */
  newSecret: string | undefined
}

const hintOf = (secret: string) => `…${secret.slice(-4)}`
const madeSecret = () => `whsec_${randomBytes(32).toString('base64url')}`

async function checkedUrl(outbound: Outbound, raw: string): Promise<string> {
  try {
    return await outbound.checkBaseUrl(raw)
  } catch (error) {
    if (error instanceof BaseUrlError) throw new BadRequestError(`body/url: ${error.message}`)
    throw error
  }
}

/** `current` is the channel being changed (PUT), whose webhook secret is kept unless a new one is given. */
export async function checkedChannelFields(options: ChannelFieldsOptions, projectId: string, body: NotificationChannelBody, current?: SealedNotificationChannel): Promise<CheckedChannel> {
  const { name, type } = body
  if (type === 'email') {
    if (body.address === undefined) throw new BadRequestError('body/address: required for an email channel')
    if (body.url !== undefined) throw new BadRequestError('body/url: an email channel has no URL (give address)')
    if (body.secret !== undefined) throw new BadRequestError('body/secret: only webhook channels are signed')
    if (!options.emailConfigured) throw new ServiceUnavailableError('Email channels need SMTP_URL and MAIL_FROM set on the server', 3600)
    return { fields: { name, type, url: null, address: body.address, secretSealed: null, secretHint: null }, newSecret: undefined }
  }
  if (body.url === undefined) throw new BadRequestError(`body/url: required for a ${type} channel`)
  if (body.address !== undefined) throw new BadRequestError(`body/address: only email channels have an address`)
  if (type === 'slack') {
    if (body.secret !== undefined) throw new BadRequestError('body/secret: only webhook channels are signed (Slack’s URL is its secret)')
    return { fields: { name, type, url: await checkedUrl(options.outbound, body.url), address: null, secretSealed: null, secretHint: null }, newSecret: undefined }
  }
  const key = options.encryptionKey
  if (key === undefined) throw new ServiceUnavailableError('Webhook channels need LLM_CONNECTION_ENCRYPTION_KEY set on the server, to keep their signing secrets sealed', 3600)
  const url = await checkedUrl(options.outbound, body.url)
  if (body.secret === undefined && current?.type === 'webhook' && current.secretSealed !== null) {
    return { fields: { name, type, url, address: null, secretSealed: current.secretSealed, secretHint: current.secretHint }, newSecret: undefined }
  }
  const secret = body.secret ?? madeSecret()
  return {
    fields: { name, type, url, address: null, secretSealed: sealSecret(secret, key, notificationChannelSecretContext(projectId)), secretHint: hintOf(secret) },
    newSecret: secret,
  }
}
