import fp from 'fastify-plugin'
import { Counter, type Registry } from 'prom-client'
import { dispatchMonitorEvents, notificationChannelSecretContext } from '@tracewell/db'
import { createChannelSender, monitorEventNotification, type NotificationSettings } from '@tracewell/notifications'
import type { Outbound } from '@tracewell/outbound'
import { startDeliveryWorker, type DeliveryWorker } from './notification-delivery.worker.ts'

declare module 'fastify' {
  interface FastifyInstance {
    notifications: DeliveryWorker
  }
}

export interface NotificationsPluginOptions {
  /** The outbound guard every webhook and Slack call goes through (closed by whoever made it). */
  outbound: Outbound
  /** LLM_CONNECTION_ENCRYPTION_KEY's 32 bytes: opens the webhooks' signing secrets. */
  encryptionKey: Buffer
  settings: NotificationSettings
  retryBaseMs: number
  pollIntervalMs: number
}

/** Monitor events dispatched per look: each is a few rows; more wait for the next look. */
const eventsPerLook = 100

const countersByRegistry = new WeakMap<Registry, Counter<'outcome'>>()
function deliveryCounter(registry: Registry): Counter<'outcome'> {
  let counter = countersByRegistry.get(registry)
  if (counter === undefined) {
    counter = new Counter({
      name: 'tracewell_notification_attempts_total',
      help: 'notification tries by outcome (delivered; retrying: failed, tried again later; failed: given up)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    })
    countersByRegistry.set(registry, counter)
  }
  return counter
}

/**
 * The delivery worker inside an app (the evaluator service, or `npm start`), beside the monitors'
 * loop that writes the events. Registered after the db plugin and the outbound guard's close hook:
 * on close it finishes its running sends before either goes.
 */
export const notificationsPlugin = fp<NotificationsPluginOptions>(
  async (app, options) => {
    const { settings } = options
    const sender = createChannelSender({
      outbound: options.outbound,
      timeoutMs: settings.timeoutMs,
      email: settings.email,
      encryptionKey: options.encryptionKey,
      secretContext: notificationChannelSecretContext,
    })
    const counter = deliveryCounter(app.metrics)
    const worker = startDeliveryWorker({
      db: app.db,
      sender,
      timeoutMs: settings.timeoutMs,
      retryBaseMs: options.retryBaseMs,
      pollIntervalMs: options.pollIntervalMs,
      outbox: (db) => dispatchMonitorEvents(db, eventsPerLook, (event) => ({ ...monitorEventNotification(event, settings.publicUrl) })),
      logger: app.log,
      count: (outcome) => counter.inc({ outcome }),
    })
    app.decorate('notifications', worker)
    app.addHook('onClose', async () => {
      await worker.close()
      sender.close()
    })
  },
  { name: 'notifications', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
