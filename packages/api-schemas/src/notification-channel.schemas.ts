import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The notification channels' API shapes (docs/api.md#notification-channels), which the console's
// channel pages speak too.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const ChannelTypeSchema = Type.Union([Type.Literal('webhook'), Type.Literal('slack'), Type.Literal('email')], {
  description: 'webhook: a signed JSON POST; slack: a Slack incoming webhook (or one that speaks it); email: a message over SMTP_URL',
})

export const NotificationChannelSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  type: ChannelTypeSchema,
  url: Nullable(Type.String({ description: 'where webhook and Slack messages are POSTed' })),
  address: Nullable(Type.String({ description: 'where email is sent' })),
  secretHint: Nullable(Type.String({ description: 'a webhook’s signing secret’s last four characters; the secret itself is only answered when it is made' })),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

/** Creation's (and a change of secret's) answer: the only time the webhook's secret is shown. */
export const SavedNotificationChannelSchema = Type.Composite([
  NotificationChannelSchema,
  Type.Object({
    secret: Type.Optional(Type.String({ description: 'the webhook’s signing secret, answered only when it is set or made: keep it, it is not shown again' })),
  }),
])

export const NotificationChannelBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: ChannelTypeSchema,
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'webhook and slack: http(s) URL without query, fragment or credentials, its host resolving to addresses the outbound policy allows',
      }),
    ),
    address: Type.Optional(Type.String({ maxLength: 320, pattern: '^[^\\s@<>(),;:"]+@[^\\s@<>(),;:"]+$', description: 'email: one address' })),
    secret: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 256,
        pattern: '^[\\x21-\\x7e]+$',
        description: 'webhook: the signing secret (16–256 printable characters); left out, one is made (whsec_…) and answered once; on a change, left out keeps the current one',
      }),
    ),
  },
  { additionalProperties: false },
)
export type NotificationChannelBody = Static<typeof NotificationChannelBodySchema>

export const DeliveryAttemptSchema = Type.Object({
  at: IsoDateSchema,
  ok: Type.Boolean(),
  status: Nullable(Type.Integer({ description: 'the receiver’s HTTP status (an SMTP reply code for email); null when nothing answered' })),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
})

export const NotificationDeliverySchema = Type.Object({
  id: Type.String(),
  channelId: Type.String(),
  kind: Type.Union([Type.Literal('event'), Type.Literal('test')]),
  eventId: Nullable(Type.String({ description: 'the monitor event it tells of (GET /api/monitors/:id/history); null for a test message' })),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], { description: 'failed: given up, after a final answer or 24 h of retries' }),
  attempts: Type.Integer(),
  nextAttemptAt: Nullable(IsoDateSchema),
  lastStatus: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  createdAt: IsoDateSchema,
  deliveredAt: Nullable(IsoDateSchema),
  log: Type.Array(DeliveryAttemptSchema, { description: 'every try, oldest first' }),
})

export const ChannelTestResultSchema = Type.Object({
  ok: Type.Boolean({ description: 'the receiver took the test message (2xx, or the mail server accepted it)' }),
  status: Nullable(Type.Integer()),
  latencyMs: Type.Integer(),
  message: Type.String({ description: 'what happened, in Tracewell’s words' }),
  deliveryId: Type.String({ description: 'the test message in the channel’s delivery log' }),
})
