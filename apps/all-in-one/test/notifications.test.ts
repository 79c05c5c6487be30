import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import { createMonitor } from '@tracewell/db'
import { verifyWebhookSignature } from '@tracewell/notifications'
import { startHttpReceiver, type HttpReceiver } from '@tracewell/test-support'
import { buildAllInOneApp, type AllInOneApp } from '../src/index.ts'

// Notifications in `npm start` on the embedded database (PGlite): a webhook channel made through
// the API, a monitor event written as the monitors' loop writes it, delivered by the delivery
// worker's own timer, signed with the secret the channel's creation answered.

describe('notifications in npm start', { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-all-in-one-notifications-'))
  let started: AllInOneApp
  let receiver: HttpReceiver

  before(async () => {
    receiver = await startHttpReceiver()
    const config = loadConfig(AllInOneConfigSchema, {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
      NOTIFICATION_POLL_INTERVAL_MS: '50',
      PUBLIC_URL: 'http://localhost:3000',
    })
    started = await buildAllInOneApp(config)
  })
  after(async () => {
    await started?.app.close()
    await receiver?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('delivers a monitor event to a webhook channel made through the API', async () => {
    const workspace = started.firstStart
    assert.ok(workspace)
    const { app } = started
    const created = await app.inject({
      method: 'POST',
      url: `/api/notification-channels?project_id=${workspace.projectId}`,
      headers: { 'x-api-key': workspace.teamApiKey },
      payload: { name: 'hook', type: 'webhook', url: receiver.url },
    })
    assert.equal(created.statusCode, 201, created.body)
    const channel = created.json() as { id: string; secret: string }
    const monitor = await createMonitor(app.db, workspace.projectId, {
      name: 'Slow answers',
      metric: 'latency_p95',
      scoreName: null,
      filter: {},
      window: 'rolling',
      windowSeconds: 300,
      operator: '>',
      threshold: 2000,
      evaluateEverySeconds: 3600,
      channelIds: [channel.id],
      renotifyAfterSeconds: null,
      mutedUntil: null,
      budgetPercents: null,
    })
    await app.db
      .insertInto('monitor_events')
      .values({
        monitor_id: monitor.id,
        project_id: workspace.projectId,
        kind: 'alerting',
        state: 'alerting',
        value: 3150,
        threshold: 2000,
        window_from: '2026-12-06T03:00:00.000Z',
        window_to: '2026-12-06T03:05:00.000Z',
        channel_ids: [channel.id],
      })
      .execute()

    const deadline = Date.now() + 30_000
    while (receiver.requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    const [request] = receiver.requests
    assert.ok(request, 'the webhook was called')
    assert.equal(verifyWebhookSignature(request.headers['x-tracewell-signature'] as string, request.body, channel.secret).ok, true)
    assert.deepEqual(JSON.parse(request.body), {
      monitor: { id: monitor.id, name: 'Slow answers' },
      state: 'alerting',
      event: 'alerting',
      value: 3150,
      threshold: 2000,
      window: { from: '2026-12-06T03:00:00.000Z', to: '2026-12-06T03:05:00.000Z' },
      url: `http://localhost:3000/traces?project_id=${workspace.projectId}&from=2026-12-06T03%3A00%3A00.000Z&to=2026-12-06T03%3A05%3A00.000Z`,
    })

    const log = await app.inject({ url: `/api/notification-channels/${channel.id}/deliveries?project_id=${workspace.projectId}`, headers: { 'x-api-key': workspace.teamApiKey } })
    const [delivery] = log.json().deliveries as Array<{ kind: string; status: string; attempts: number; log: Array<{ ok: boolean; status: number }> }>
    assert.deepEqual([delivery?.kind, delivery?.status, delivery?.attempts, delivery?.log.map(({ ok, status }) => [ok, status])], ['event', 'delivered', 1, [[true, 200]]])
  })
})
