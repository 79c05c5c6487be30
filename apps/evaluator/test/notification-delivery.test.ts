import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { sealSecret } from '@tracewell/auth'
import {
  createMonitor,
  createNotificationChannel,
  createNotificationDelivery,
  createProject,
  createTeam,
  dispatchMonitorEvents,
  notificationChannelSecretContext,
  sql,
  type Db,
} from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { createChannelSender, monitorEventNotification, verifyWebhookSignature, type ChannelSender, type Notification } from '@tracewell/notifications'
import { createOutbound, type Outbound } from '@tracewell/outbound'
import { startHttpReceiver, type HttpReceiver } from '@tracewell/test-support'
import { startDeliveryWorker, type DeliveryWorker } from '../src/notifications/notification-delivery.worker.ts'

// The delivery worker against the real Postgres and real receivers on 127.0.0.1: monitor events
// turned into one delivery per channel (once, however often they are taken), signed webhooks,
// retries with backoff on a 500, a hanging receiver given up at the timeout without holding the
// others, a redirect not followed, the 24 h limit, and two workers sharing the due deliveries.

const key = Buffer.alloc(32, 9)
const secret = 'whsec_worker-test-secret-0123456789'
const timeoutMs = 400
const retryBaseMs = 150
const quietLogger = { info: () => undefined, warn: () => undefined, error: () => undefined }

describe('notification delivery worker', { timeout: 120_000 }, () => {
  let db: Db
  let drop: () => Promise<void>
  let receiver: HttpReceiver
  let outbound: Outbound
  let sender: ChannelSender
  let projectId: string
  let webhookId: string
  let slackId: string
  const workers: DeliveryWorker[] = []

  const worker = (options: { sender?: ChannelSender; timeoutMs?: number } = {}) => {
    const started = startDeliveryWorker({
      db,
      sender: options.sender ?? sender,
      timeoutMs: options.timeoutMs ?? timeoutMs,
      retryBaseMs,
      // No test waits for the timer: each calls look() itself.
      pollIntervalMs: 3_600_000,
      outbox: (database) => dispatchMonitorEvents(database, 100, (event) => ({ ...monitorEventNotification(event, 'https://tracewell.example.com') })),
      logger: quietLogger,
    })
    workers.push(started)
    return started
  }
  const notification: Notification = {
    monitor: { id: 'm', name: 'latency' },
    state: 'alerting',
    event: 'alerting',
    value: 1,
    threshold: 0.5,
    window: { from: '2026-12-06T00:00:00.000Z', to: '2026-12-06T00:05:00.000Z' },
    url: '/traces',
  }
  const attemptsOf = (deliveryId: string) =>
    db.selectFrom('notification_attempts').select(['ok', 'http_status', 'error', 'attempted_at']).where('delivery_id', '=', deliveryId).orderBy('id').execute()
  const deliveryRow = (deliveryId: string) => db.selectFrom('notification_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirstOrThrow()

  before(async () => {
    ;({ db, drop } = await createTestDatabase())
    receiver = await startHttpReceiver()
    outbound = createOutbound({ allowCidrs: '127.0.0.1/32', maxResponseBytes: 4096, connectTimeoutMs: 2_000 })
    sender = createChannelSender({ outbound, timeoutMs, email: undefined, encryptionKey: key, secretContext: notificationChannelSecretContext })
    const teamId = (await createTeam(db, { name: 'alerts' })).id
    projectId = (await createProject(db, { teamId, name: 'shop' })).id
    webhookId = (
      await createNotificationChannel(db, projectId, {
        name: 'hook',
        type: 'webhook',
        url: receiver.url,
        address: null,
        secretSealed: sealSecret(secret, key, notificationChannelSecretContext(projectId)),
        secretHint: '…6789',
      })
    ).id
    slackId = (await createNotificationChannel(db, projectId, { name: 'slack', type: 'slack', url: receiver.url, address: null, secretSealed: null, secretHint: null })).id
  })
  beforeEach(() => {
    receiver.requests.length = 0
    receiver.answer = (_, response) => response.end('ok')
  })
  after(async () => {
    for (const started of workers) await started.close()
    sender.close()
    await outbound.close()
    await receiver.close()
    await drop()
  })

  it('turns a monitor event into one signed delivery per channel, once', async () => {
    const monitor = await createMonitor(db, projectId, {
      name: 'Checkout errors',
      metric: 'error_rate',
      scoreName: null,
      filter: { service: 'checkout', attr: ['region=eu'] },
      window: 'rolling',
      windowSeconds: 300,
      operator: '>',
      threshold: 0.1,
      evaluateEverySeconds: 60,
      channelIds: [webhookId, slackId, 'deleted-channel'],
      renotifyAfterSeconds: null,
      mutedUntil: null,
      budgetPercents: null,
    })
    const event = await db
      .insertInto('monitor_events')
      .values({
        monitor_id: monitor.id,
        project_id: projectId,
        kind: 'alerting',
        state: 'alerting',
        value: 0.25,
        threshold: 0.1,
        window_from: '2026-12-06T03:00:00.000Z',
        window_to: '2026-12-06T03:05:00.000Z',
        channel_ids: [webhookId, slackId, 'deleted-channel'],
      })
      .returning('id')
      .executeTakeFirstOrThrow()

    const first = worker()
    await first.look()
    const deliveries = await db.selectFrom('notification_deliveries').selectAll().where('event_id', '=', event.id).orderBy('channel_id').execute()
    assert.deepEqual(
      deliveries.map((delivery) => [delivery.channel_id, delivery.kind, delivery.status, delivery.attempts, delivery.last_status]).sort(),
      [
        [slackId, 'event', 'delivered', 1, 200],
        [webhookId, 'event', 'delivered', 1, 200],
      ].sort(),
    )
    const dispatched = await db.selectFrom('monitor_events').select('dispatched_at').where('id', '=', event.id).executeTakeFirstOrThrow()
    assert.ok(dispatched.dispatched_at instanceof Date)

    const hook = receiver.requests.find((request) => request.headers['x-tracewell-signature'] !== undefined)
    assert.ok(hook)
    assert.equal(verifyWebhookSignature(hook.headers['x-tracewell-signature'] as string, hook.body, secret).ok, true)
    assert.equal(hook.headers['x-tracewell-delivery'], deliveries.find((delivery) => delivery.channel_id === webhookId)?.id)
    assert.deepEqual(JSON.parse(hook.body), {
      monitor: { id: monitor.id, name: 'Checkout errors' },
      state: 'alerting',
      event: 'alerting',
      value: 0.25,
      threshold: 0.1,
      window: { from: '2026-12-06T03:00:00.000Z', to: '2026-12-06T03:05:00.000Z' },
      url: `https://tracewell.example.com/traces?project_id=${projectId}&from=2026-12-06T03%3A00%3A00.000Z&to=2026-12-06T03%3A05%3A00.000Z&attr=region%3Deu&service=checkout&status=error`,
    })
    assert.equal(receiver.requests.length, 2)

    // Taken again (as if a replica had not seen it dispatched): the unique key makes nothing new.
    await db.updateTable('monitor_events').set({ dispatched_at: null }).where('id', '=', event.id).execute()
    await worker().look()
    assert.equal((await db.selectFrom('notification_deliveries').select('id').where('event_id', '=', event.id).execute()).length, 2)
    assert.equal(receiver.requests.length, 2)
  })

  it('retries a 500 with growing waits, logging every try, until it is delivered', async () => {
    let answered = 0
    receiver.answer = (_, response) => (answered++ < 2 ? response.writeHead(500).end('down') : response.end('ok'))
    const id = await createNotificationDelivery(db, { channelId: webhookId, kind: 'test', eventId: null, payload: notification })
    const looker = worker()
    await looker.look()
    const afterFirst = await deliveryRow(id)
    assert.deepEqual([afterFirst.status, afterFirst.attempts, afterFirst.last_status, afterFirst.last_error], ['pending', 1, 500, 'the receiver answered 500'])
    const firstWait = afterFirst.next_attempt_at.getTime() - Date.now()
    assert.ok(firstWait > 0 && firstWait <= retryBaseMs, `first wait ${firstWait}`)
    // Not due yet: a look sends nothing.
    await looker.look()
    assert.equal(receiver.requests.length, 1)

    await new Promise((resolve) => setTimeout(resolve, retryBaseMs))
    await looker.look()
    const afterSecond = await deliveryRow(id)
    assert.deepEqual([afterSecond.status, afterSecond.attempts], ['pending', 2])
    const secondWait = afterSecond.next_attempt_at.getTime() - (await attemptsOf(id)).at(-1)!.attempted_at.getTime()
    assert.ok(secondWait >= 2 * retryBaseMs - 50 && secondWait <= 2 * retryBaseMs + 200, `second wait ${secondWait}`)

    await new Promise((resolve) => setTimeout(resolve, 2 * retryBaseMs))
    await looker.look()
    const delivered = await deliveryRow(id)
    assert.deepEqual([delivered.status, delivered.attempts, delivered.last_status, delivered.last_error], ['delivered', 3, 200, null])
    assert.ok(delivered.delivered_at instanceof Date)
    const log = await attemptsOf(id)
    assert.deepEqual(
      log.map(({ ok, http_status, error }) => [ok, http_status, error]),
      [
        [false, 500, 'the receiver answered 500'],
        [false, 500, 'the receiver answered 500'],
        [true, 200, null],
      ],
    )
    const gaps = [log[1]!.attempted_at.getTime() - log[0]!.attempted_at.getTime(), log[2]!.attempted_at.getTime() - log[1]!.attempted_at.getTime()]
    assert.ok(gaps[0]! >= retryBaseMs - 20 && gaps[1]! >= 2 * retryBaseMs - 20, `gaps ${gaps.join(', ')}`)
  })

  it('gives a hanging receiver up at the timeout, while the others are delivered; a redirect is final and not followed', async () => {
    const elsewhere = await startHttpReceiver()
    try {
      receiver.answer = (request, response) => {
        const name = (JSON.parse(request.body) as Notification).monitor.name
        if (name === 'hangs') return // never answered
        if (name === 'redirects') return response.writeHead(301, { location: elsewhere.url }).end()
        response.end('ok')
      }
      const hangs = await createNotificationDelivery(db, { channelId: webhookId, kind: 'test', eventId: null, payload: { ...notification, monitor: { id: 'h', name: 'hangs' } } })
      const redirects = await createNotificationDelivery(db, { channelId: webhookId, kind: 'test', eventId: null, payload: { ...notification, monitor: { id: 'r', name: 'redirects' } } })
      const fine = await createNotificationDelivery(db, { channelId: webhookId, kind: 'test', eventId: null, payload: { ...notification, monitor: { id: 'f', name: 'fine' } } })
      const started = Date.now()
      await worker().look()
      const took = Date.now() - started
      assert.ok(took < timeoutMs + 1_000, `the look took ${took} ms`)
      const rows = await Promise.all([hangs, redirects, fine].map(deliveryRow))
      assert.deepEqual(
        rows.map((row) => [row.status, row.attempts, row.last_status, row.last_error]),
        [
          ['pending', 1, null, `no complete reply within ${timeoutMs} ms`],
          ['failed', 1, 301, 'the receiver answered 301, a redirect, which is not followed: save the URL it redirects to'],
          ['delivered', 1, 200, null],
        ],
      )
      assert.equal(elsewhere.requests.length, 0)
    } finally {
      await elsewhere.close()
    }
  })

  it('gives up once the retries would pass 24 hours from the notification', async () => {
    receiver.answer = (_, response) => response.writeHead(503).end()
    const id = await createNotificationDelivery(db, { channelId: webhookId, kind: 'test', eventId: null, payload: notification })
    await db.updateTable('notification_deliveries').set({ created_at: sql<Date>`now() - interval '23 hours 59 minutes 59.95 seconds'` }).where('id', '=', id).execute()
    await worker().look()
    const row = await deliveryRow(id)
    assert.deepEqual([row.status, row.attempts, row.last_status, row.last_error], ['failed', 1, 503, 'the receiver answered 503'])
  })

  it('never sends one delivery twice when two workers look at once', async () => {
    await db.updateTable('notification_deliveries').set({ status: 'failed' }).where('status', '=', 'pending').execute()
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, i) => createNotificationDelivery(db, { channelId: webhookId, kind: 'test', eventId: null, payload: { ...notification, value: i } })),
    )
    // A send given up at its timeout is tried again (at least once: the receiver may have read it),
    // and on a loaded machine a reply can take longer than the other tests' 400 ms. With a timeout
    // no reply here reaches, only a delivery claimed twice could send a second request.
    const patientTimeoutMs = 30_000
    const patient = createChannelSender({ outbound, timeoutMs: patientTimeoutMs, email: undefined, encryptionKey: key, secretContext: notificationChannelSecretContext })
    const [a, b] = [worker({ sender: patient, timeoutMs: patientTimeoutMs }), worker({ sender: patient, timeoutMs: patientTimeoutMs })]
    try {
      for (let round = 0; round < 4; round++) await Promise.all([a.look(), b.look()])
    } finally {
      patient.close()
    }
    const sent = receiver.requests.map((request) => request.headers['x-tracewell-delivery'] as string)
    assert.equal(sent.length, 40)
    assert.deepEqual([...new Set(sent)].sort(), [...ids].sort())
    const rows = await db.selectFrom('notification_deliveries').select(['status', 'attempts']).where('id', 'in', ids).execute()
    assert.deepEqual(new Set(rows.map((row) => `${row.status}/${row.attempts}`)), new Set(['delivered/1']))
  })
})
