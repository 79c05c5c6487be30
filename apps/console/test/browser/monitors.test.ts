import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { sendTraces, timedSpan } from '../support/seed.ts'

// Alerting set up by a person in the console, against `npm start` and a webhook receiver of the
// test's own on 127.0.0.1: a webhook channel made (its secret shown once) and tested, a monitor of
// the error rate evaluated every 10 s that notifies it; failing traces sent, the monitor seen
// alerting and the receiver sent a signed notification; good traces sent, the monitor seen
// resolving, in its history and at the receiver.

interface Received {
  headers: Record<string, string | string[] | undefined>
  body: string
}

function startReceiver(): Promise<{ url: string; server: Server; received: Received[] }> {
  const received: Received[] = []
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    received.push({ headers: request.headers, body: Buffer.concat(chunks).toString() })
    response.writeHead(204).end()
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`, server, received })))
}

/** `count` traces of `chat-api` ending now, each one span, failing or not. */
async function sendChats(url: string, projectKey: string, count: number, failing: boolean): Promise<void> {
  await sendTraces(url, projectKey, 'chat-api', (tracer) => {
    const now = Date.now()
    for (let i = 0; i < count; i++) {
      const span = timedSpan(tracer, 'POST /chat', now - 2_000 - i * 10, now - 1_000 - i * 10, failing ? { error: 'model unavailable' } : {})
      span.end()
    }
  })
}

/** The notifications (not test messages) the receiver got, parsed. */
const notifications = (received: Received[]) =>
  received
    .map((request) => ({ ...request, json: JSON.parse(request.body) as { monitor?: { id: string; name: string }; state?: string; value?: number | null; threshold?: number } }))
    .filter((request) => request.json.state !== 'test')

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

const stateOf = (page: Page) => page.locator('.page-header .monitor-state .badge').first().textContent()

describe('monitors and notification channels in the console', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  before(async () => {
    receiver = await startReceiver()
  })
  after(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())))
  const fx = consoleFixture(undefined, { OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' })

  it('alerts on failing traces, notifies a signed webhook, and resolves on good ones', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.setViewportSize({ width: 1280, height: 800 })

    // A webhook channel: its secret is shown once, a test message reaches the receiver.
    await page.getByRole('link', { name: 'Channels' }).click()
    await page.getByRole('heading', { name: 'Notification channels' }).waitFor()
    await page.getByLabel('Name').fill('on-call')
    await page.getByLabel('Webhook URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Add channel' }).click()
    const secret = (await page.getByLabel('The new signing secret').textContent()) ?? ''
    assert.match(secret, /^\S{16,}$/)
    await page.getByRole('button', { name: 'Send a test to on-call' }).click()
    await page
      .getByRole('row', { name: /on-call/ })
      .getByText('delivered')
      .first()
      .waitFor()
    await waitFor('the test message', () => receiver.received.length === 1)
    const deliveries = page.getByRole('table', { name: 'Deliveries of on-call' })
    await deliveries.getByRole('cell', { name: 'test message' }).waitFor()
    await screenshot(page, 'channels')

    // A monitor of the error rate of chat-api over a minute, evaluated every 10 s.
    await page.getByRole('link', { name: 'Monitors' }).click()
    await page.getByRole('link', { name: 'New monitor' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Chat failing')
    await page.getByLabel('Metric').selectOption('error_rate')
    await page.getByLabel('Over the last').selectOption('60')
    await page.getByLabel('Alert when the value is').selectOption('>')
    await page.getByLabel('Threshold').fill('0.5')
    await page.getByLabel('Evaluate every').selectOption('10')
    await page.getByLabel(/on-call/).check()
    await page.getByLabel('Service', { exact: true }).fill('chat-api')
    await page.getByRole('button', { name: 'Create monitor' }).click()
    await page.waitForURL(/\/monitors\/[^/?]+\?/)
    await page.getByRole('heading', { name: 'Chat failing' }).waitFor()
    const monitorId = new URL(page.url()).pathname.split('/')[2]

    await sendChats(fx.stack.url, fx.stack.projectKey, 4, true)
    await waitFor('the monitor to alert', async () => (await stateOf(page)) === 'alerting')
    await page.getByRole('table', { name: 'State changes' }).getByText('started alerting').waitFor()
    await screenshot(page, 'monitor-alerting')
    await waitFor('the alert at the receiver', () => notifications(receiver.received).some((request) => request.json.state === 'alerting'))
    const alert = notifications(receiver.received).find((request) => request.json.state === 'alerting')
    assert.ok(alert)
    assert.deepEqual({ monitor: alert.json.monitor, value: alert.json.value, threshold: alert.json.threshold }, { monitor: { id: monitorId, name: 'Chat failing' }, value: 1, threshold: 0.5 })
    // Signed as Stripe signs: t=<seconds>,v1=HMAC-SHA256("<t>.<body>") with the channel's secret.
    const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(alert.headers['x-tracewell-signature']))
    assert.ok(signature, `signature header: ${String(alert.headers['x-tracewell-signature'])}`)
    assert.equal(signature[2], createHmac('sha256', secret).update(`${signature[1]}.${alert.body}`).digest('hex'))

    await sendChats(fx.stack.url, fx.stack.projectKey, 12, false)
    await waitFor('the monitor to resolve', async () => (await stateOf(page)) === 'ok')
    await page.getByRole('table', { name: 'State changes' }).getByText('resolved').waitFor()
    await waitFor('the resolution at the receiver', () => notifications(receiver.received).some((request) => request.json.state === 'resolved'))
    assert.deepEqual(
      notifications(receiver.received).map((request) => request.json.state),
      ['alerting', 'resolved'],
      'one notification per change',
    )
    await screenshot(page, 'monitor-resolved')

    await page.getByRole('link', { name: '← Monitors' }).click()
    const row = page.getByRole('table', { name: 'Monitors' }).getByRole('row', { name: /Chat failing/ })
    await row.getByText('ok', { exact: true }).waitFor()
    assert.match((await row.textContent()) ?? '', /Error rate > 50\.0% over 1 min/)

    // The monthly budget: a cost monitor over the calendar month, told at 50, 80 and 100 %.
    await page.getByLabel('Budget (US dollars a month)').fill('500')
    await page.getByRole('form', { name: 'Monthly budget' }).getByLabel(/on-call/).check()
    await page.getByRole('button', { name: 'Set budget' }).click()
    const budget = page.getByRole('table', { name: 'Monitors' }).getByRole('row', { name: /Monthly budget/ })
    await budget.waitFor()
    assert.match((await budget.textContent()) ?? '', /Cost >= \$500\.00 this month/)
    const monitors = (await (await fetch(`${fx.stack.url}/api/monitors`, { headers: { 'x-api-key': fx.stack.projectKey } })).json()) as { monitors: Array<Record<string, unknown>> }
    const stored = monitors.monitors.find((monitor) => monitor.metric === 'cost')
    assert.deepEqual(
      { window: stored?.window, threshold: stored?.threshold, budgetPercents: stored?.budgetPercents, channels: (stored?.channelIds as string[] | undefined)?.length },
      { window: 'calendar_month', threshold: 500, budgetPercents: [50, 80, 100], channels: 1 },
    )
    await screenshot(page, 'monitors')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
