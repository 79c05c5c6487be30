import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  createNotificationChannel,
  createNotificationDelivery,
  deleteNotificationChannel,
  findNotificationChannel,
  listChannelDeliveries,
  listNotificationChannels,
  NOTIFICATION_CHANNEL_EXISTS,
  recordDeliveryAttempt,
  updateNotificationChannel,
  type NotificationChannelDto,
} from '@tracewell/db'
import { ConflictError, NotFoundError } from '@tracewell/http'
import { testNotification, type ChannelSender } from '@tracewell/notifications'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { checkedChannelFields, type ChannelFieldsOptions } from '../notifications/channel-fields.ts'
import { ChannelTestResultSchema, errorResponses, IdSchema, NotificationChannelBodySchema, NotificationChannelSchema, NotificationDeliverySchema, ProjectScopeQuerySchema, SavedNotificationChannelSchema } from '@tracewell/api-schemas'

// A project's notification channels (docs/api.md#notification-channels): where its monitors'
// notifications go. Changing them takes a team key or the console's session (requireSpendAccess):
// a project key ships inside applications, and a channel is an address Tracewell posts to.

export interface NotificationChannelRoutesOptions extends ChannelFieldsOptions {
  /** Sends the test message, as the delivery worker sends notifications. */
  sender: ChannelSender
  /** PUBLIC_URL: the test message's link to the console. */
  publicUrl: string | undefined
}

const ChannelParamsSchema = Type.Object({ channelId: IdSchema })
const tags = ['notifications']
const security = [{ apiKey: [] }]

function conflictOnName<T>(name: string, write: Promise<T>): Promise<T> {
  return write.catch((error: unknown) => {
    if ((error as { constraint?: unknown }).constraint === NOTIFICATION_CHANNEL_EXISTS) throw new ConflictError(`A notification channel named ${JSON.stringify(name)} exists already`)
    throw error
  })
}

const withSecret = (channel: NotificationChannelDto, secret: string | undefined) => (secret === undefined ? channel : { ...channel, secret })

export const notificationChannelRoutes: FastifyPluginAsyncTypebox<NotificationChannelRoutesOptions> = async (app, options) => {
  async function channelOf(projectId: string, channelId: string) {
    const channel = await findNotificationChannel(app.db, projectId, channelId)
    if (channel === undefined) throw new NotFoundError('Notification channel not found')
    return channel
  }

  app.get(
    '/api/notification-channels',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:read' },
      schema: {
        operationId: 'listNotificationChannels',
        summary: 'The project’s notification channels',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ notificationChannels: Type.Array(NotificationChannelSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ({ notificationChannels: await listNotificationChannels(app.db, callerProjectId(request)) }),
  )

  app.post(
    '/api/notification-channels',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:write' },
      schema: {
        operationId: 'createNotificationChannel',
        summary: 'Add a webhook, Slack or email channel for monitor notifications',
        description: 'A webhook’s signing secret is answered here once (made when the body has none) and never again.',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        body: NotificationChannelBodySchema,
        response: { 201: SavedNotificationChannelSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const projectId = callerProjectId(request)
      const { fields, newSecret } = await checkedChannelFields(options, projectId, request.body)
      const channel = await conflictOnName(fields.name, createNotificationChannel(app.db, projectId, fields))
      return reply.code(201).send(withSecret(channel, newSecret))
    },
  )

  app.get(
    '/api/notification-channels/:channelId',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:read' },
      schema: {
        operationId: 'getNotificationChannel',
        summary: 'One notification channel',
        tags,
        security,
        params: ChannelParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: NotificationChannelSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { secretSealed: _sealed, ...channel } = await channelOf(callerProjectId(request), request.params.channelId)
      return channel
    },
  )

  app.put(
    '/api/notification-channels/:channelId',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:write' },
      schema: {
        operationId: 'updateNotificationChannel',
        summary: 'Replace a notification channel’s name, type and target',
        description: 'A webhook keeps its signing secret unless the body brings one; a channel that becomes a webhook gets a new one, answered once.',
        tags,
        security,
        params: ChannelParamsSchema,
        querystring: ProjectScopeQuerySchema,
        body: NotificationChannelBodySchema,
        response: { 200: SavedNotificationChannelSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const current = await channelOf(projectId, request.params.channelId)
      const { fields, newSecret } = await checkedChannelFields(options, projectId, request.body, current)
      const channel = await conflictOnName(fields.name, updateNotificationChannel(app.db, projectId, current.id, fields))
      if (channel === undefined) throw new NotFoundError('Notification channel not found')
      return withSecret(channel, newSecret)
    },
  )

  app.delete(
    '/api/notification-channels/:channelId',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:write' },
      schema: {
        operationId: 'deleteNotificationChannel',
        summary: 'Delete a notification channel, its pending deliveries and its delivery log',
        tags,
        security,
        params: ChannelParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteNotificationChannel(app.db, callerProjectId(request), request.params.channelId))) throw new NotFoundError('Notification channel not found')
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/notification-channels/:channelId/deliveries',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:read' },
      schema: {
        operationId: 'listNotificationDeliveries',
        summary: 'The channel’s delivery log: its newest notifications, each with every try',
        tags,
        security,
        params: ChannelParamsSchema,
        querystring: Type.Composite([ProjectScopeQuerySchema, Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) })], {
          additionalProperties: false,
        }),
        response: { 200: Type.Object({ deliveries: Type.Array(NotificationDeliverySchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const channel = await channelOf(callerProjectId(request), request.params.channelId)
      return { deliveries: await listChannelDeliveries(app.db, channel.id, request.query.limit ?? 50) }
    },
  )

  app.post(
    '/api/notification-channels/:channelId/test',
    {
      onRequest: authorize,
      config: { permission: 'notification-channels:write' },
      schema: {
        operationId: 'testNotificationChannel',
        summary: 'Send a test message to the channel now, and answer how it went',
        description: 'Always 200 once the channel exists: ok=false with the reason when the address is refused, nothing answers in time, or the receiver refuses. One try, no retry; it is in the delivery log.',
        tags,
        security,
        params: ChannelParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: ChannelTestResultSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const channel = await channelOf(projectId, request.params.channelId)
      const notification = testNotification(projectId, options.publicUrl)
      // Logged once sent, not before: a pending row would be the delivery worker's to send again.
      const deliveryId = randomUUID()
      const outcome = await options.sender.send(channel, notification, deliveryId)
      await createNotificationDelivery(app.db, { id: deliveryId, channelId: channel.id, kind: 'test', eventId: null, payload: notification })
      await recordDeliveryAttempt(
        app.db,
        deliveryId,
        { ok: outcome.ok, httpStatus: outcome.status, error: outcome.error, durationMs: outcome.durationMs, next: { status: outcome.ok ? 'delivered' : 'failed' } },
        true,
      )
      const message = outcome.ok
        ? channel.type === 'email'
          ? 'the mail server took the test message'
          : `the receiver answered ${outcome.status}: the channel works`
        : (outcome.error ?? 'not delivered')
      return { ok: outcome.ok, status: outcome.status, latencyMs: outcome.durationMs, message, deliveryId }
    },
  )
}
