import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { claimDueDeliveries } from '@tracewell/db'
import { verifyWebhookSignature } from '@tracewell/notifications'
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '@tracewell/test-support'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Notification channels through the routes: created with a team key (a project key is refused),
// URLs checked by the outbound guard as they are saved, the webhook secret answered once, the
// test message sent to real receivers on 127.0.0.1 (an HTTP server and an SMTP server), and
// every test message in the channel's delivery log.

describe('notification channels', { timeout: 120_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let receiver: HttpReceiver
  let smtp: SmtpReceiver
  const scoped = (path: string, workspace = ws) => `${path}${path.includes('?') ? '&' : '?'}project_id=${workspace.projectId}`
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object, key = ws.teamKey, workspace = ws) =>
    cp.app.inject({ method, url: scoped(path, workspace), headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload }) })

  before(async () => {
    receiver = await startHttpReceiver()
    smtp = await startSmtpReceiver()
    cp = await startControlPlane({
      LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Tracewell <alerts@tracewell.test>',
      PUBLIC_URL: 'https://tracewell.example.com/',
      NOTIFICATION_TIMEOUT_MS: '1000',
    })
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(async () => {
    await cp?.close()
    await receiver?.close()
    await smtp?.close()
  })

  it('refuses a URL the outbound policy refuses as it is saved, naming the rule', async () => {
    const cases: Array<[object, string]> = [
      [{ name: 'meta', type: 'webhook', url: 'http://169.254.169.254/hook' }, 'body/url: 169.254.169.254 is a cloud metadata address; allow it with OUTBOUND_ALLOW_CIDRS'],
      [{ name: 'private', type: 'slack', url: 'http://10.0.0.8/services/x' }, 'body/url: 10.0.0.8 is a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS'],
      [{ name: 'loop', type: 'webhook', url: 'http://127.0.0.2:9/hook' }, 'body/url: 127.0.0.2 is a loopback address; allow it with OUTBOUND_ALLOW_CIDRS'],
      [{ name: 'file', type: 'webhook', url: 'file:///etc/passwd' }, 'body/url: must be http:// or https://, got file:'],
      [{ name: 'no url', type: 'webhook' }, 'body/url: required for a webhook channel'],
      [{ name: 'no address', type: 'email' }, 'body/address: required for an email channel'],
      [{ name: 'both', type: 'email', address: 'a@example.com', url: receiver.url }, 'body/url: an email channel has no URL (give address)'],
      [{ name: 'slack secret', type: 'slack', url: receiver.url, secret: 'a-secret-of-enough-length' }, 'body/secret: only webhook channels are signed (Slack’s URL is its secret)'],
    ]
    for (const [body, message] of cases) {
      const response = await call('POST', '/api/notification-channels', body)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(body))
    }
    const badAddress = await call('POST', '/api/notification-channels', { name: 'x', type: 'email', address: 'not an address' })
    assert.deepEqual([badAddress.statusCode, badAddress.json()], [400, { message: 'body/address: must match pattern "^[^\\s@<>(),;:"]+@[^\\s@<>(),;:"]+$"' }])
    assert.deepEqual(await cp.db.selectFrom('notification_channels').select('id').execute(), [])
  })

  it('keeps channels from project keys: their targets are the team’s (403 naming the permission)', async () => {
    for (const [method, path, permission] of [
      ['POST', '/api/notification-channels', 'notification-channels:write'],
      ['POST', '/api/notification-channels/any/test', 'notification-channels:write'],
      ['DELETE', '/api/notification-channels/any', 'notification-channels:write'],
      ['GET', '/api/notification-channels', 'notification-channels:read'],
    ] as const) {
      const response = await call(method, path, method === 'POST' && path === '/api/notification-channels' ? { name: 'hook', type: 'webhook', url: receiver.url } : undefined, ws.projectKey)
      assert.deepEqual([response.statusCode, response.json().message], [403, `Not allowed: this needs the permission ${permission} (docs/permissions.md)`])
    }
    assert.deepEqual(await cp.db.selectFrom('notification_channels').select('id').execute(), [])
  })

  it('answers a made webhook secret once, keeps it sealed, and keeps it across a change', async () => {
    const created = await call('POST', '/api/notification-channels', { name: 'On-call hook', type: 'webhook', url: `${receiver.url}/` })
    assert.equal(created.statusCode, 201)
    const channel = created.json()
    assert.match(channel.secret, /^whsec_[A-Za-z0-9_-]{43}$/)
    assert.deepEqual({ ...channel, id: 'x', createdAt: 'x', updatedAt: 'x', secret: 'x' }, {
      id: 'x',
      projectId: ws.projectId,
      name: 'On-call hook',
      type: 'webhook',
      url: receiver.url,
      address: null,
      secretHint: `…${channel.secret.slice(-4)}`,
      createdAt: 'x',
      updatedAt: 'x',
      secret: 'x',
    })
    const row = await cp.db.selectFrom('notification_channels').selectAll().where('id', '=', channel.id).executeTakeFirstOrThrow()
    assert.match(row.secret_sealed ?? '', /^v1:/)
    assert.ok(!(row.secret_sealed ?? '').includes(channel.secret))

    const read = await call('GET', `/api/notification-channels/${channel.id}`)
    assert.equal(read.statusCode, 200)
    assert.equal('secret' in read.json(), false)
    assert.equal(read.json().secretHint, channel.secretHint)

    const renamed = await call('PUT', `/api/notification-channels/${channel.id}`, { name: 'Pager hook', type: 'webhook', url: receiver.url })
    assert.deepEqual([renamed.statusCode, renamed.json().name, renamed.json().secretHint, 'secret' in renamed.json()], [200, 'Pager hook', channel.secretHint, false])

    // The test message is signed with the secret answered at creation.
    receiver.requests.length = 0
    receiver.answer = (_, response) => response.end('ok')
    const tested = await call('POST', `/api/notification-channels/${channel.id}/test`)
    assert.equal(tested.statusCode, 200)
    assert.deepEqual({ ...(tested.json() as object), latencyMs: 0, deliveryId: 'x' }, { ok: true, status: 200, latencyMs: 0, message: 'the receiver answered 200: the channel works', deliveryId: 'x' })
    const [request] = receiver.requests
    assert.ok(request)
    assert.equal(verifyWebhookSignature(request.headers['x-tracewell-signature'] as string, request.body, channel.secret).ok, true)
    const body = JSON.parse(request.body)
    assert.deepEqual(Object.keys(body), ['monitor', 'state', 'event', 'value', 'threshold', 'window', 'url'])
    assert.deepEqual([body.monitor, body.state, body.event, body.value, body.threshold], [{ id: 'test', name: 'Test notification from Tracewell' }, 'test', 'test', null, null])
    assert.equal(body.url, `https://tracewell.example.com/traces?project_id=${ws.projectId}&from=${encodeURIComponent(body.window.from)}&to=${encodeURIComponent(body.window.to)}`)

    const deleted = await call('DELETE', `/api/notification-channels/${channel.id}`)
    assert.equal(deleted.statusCode, 204)
    assert.equal((await call('GET', `/api/notification-channels/${channel.id}`)).statusCode, 404)
    assert.deepEqual(await cp.db.selectFrom('notification_deliveries').select('id').where('channel_id', '=', channel.id).execute(), [])
  })

  it('takes a secret the caller sets, and refuses a second channel of one name', async () => {
    const created = await call('POST', '/api/notification-channels', { name: 'Set secret', type: 'webhook', url: receiver.url, secret: 'my-own-secret-0123456789' })
    assert.deepEqual([created.statusCode, created.json().secret, created.json().secretHint], [201, 'my-own-secret-0123456789', '…6789'])
    const again = await call('POST', '/api/notification-channels', { name: 'Set secret', type: 'slack', url: receiver.url })
    assert.deepEqual([again.statusCode, again.json()], [409, { message: 'A notification channel named "Set secret" exists already' }])

    // A Slack channel turned into a webhook gets a secret, answered once; back to Slack, it has none.
    const slack = (await call('POST', '/api/notification-channels', { name: 'Turns', type: 'slack', url: receiver.url })).json()
    const webhook = await call('PUT', `/api/notification-channels/${slack.id}`, { name: 'Turns', type: 'webhook', url: receiver.url })
    assert.equal(webhook.statusCode, 200)
    assert.match(webhook.json().secret, /^whsec_/)
    const back = await call('PUT', `/api/notification-channels/${slack.id}`, { name: 'Turns', type: 'slack', url: receiver.url })
    assert.deepEqual([back.statusCode, back.json().secretHint, 'secret' in back.json()], [200, null, false])
    const renamedOnto = await call('PUT', `/api/notification-channels/${slack.id}`, { name: 'Set secret', type: 'slack', url: receiver.url })
    assert.deepEqual([renamedOnto.statusCode, renamedOnto.json()], [409, { message: 'A notification channel named "Set secret" exists already' }])
    assert.equal((await call('DELETE', `/api/notification-channels/${slack.id}`)).statusCode, 204)
  })

  it('logs every test message: a 500 and a hanging receiver fail with their reason, a redirect is not followed', async () => {
    const channel = (await call('POST', '/api/notification-channels', { name: 'Flaky', type: 'slack', url: receiver.url })).json()
    receiver.answer = (_, response) => response.writeHead(500).end('down')
    const failed = await call('POST', `/api/notification-channels/${channel.id}/test`)
    assert.deepEqual({ ...(failed.json() as object), latencyMs: 0, deliveryId: 'x' }, { ok: false, status: 500, latencyMs: 0, message: 'the receiver answered 500', deliveryId: 'x' })

    receiver.answer = (_, response) => response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end()
    const redirected = await call('POST', `/api/notification-channels/${channel.id}/test`)
    assert.deepEqual([redirected.json().ok, redirected.json().status, redirected.json().message], [
      false,
      302,
      'the receiver answered 302, a redirect, which is not followed: save the URL it redirects to',
    ])

    receiver.answer = () => {}
    const started = Date.now()
    const hung = await call('POST', `/api/notification-channels/${channel.id}/test`)
    assert.ok(Date.now() - started < 3_000)
    assert.deepEqual([hung.json().ok, hung.json().status, hung.json().message], [false, null, 'no complete reply within 1000 ms'])

    const log = await call('GET', `/api/notification-channels/${channel.id}/deliveries`)
    assert.equal(log.statusCode, 200)
    const deliveries = log.json().deliveries as Array<Record<string, unknown> & { log: Array<Record<string, unknown>> }>
    assert.deepEqual(
      deliveries.map((delivery) => [delivery.id, delivery.kind, delivery.eventId, delivery.status, delivery.attempts, delivery.lastStatus, delivery.lastError, delivery.nextAttemptAt, delivery.deliveredAt]),
      [
        [hung.json().deliveryId, 'test', null, 'failed', 1, null, 'no complete reply within 1000 ms', null, null],
        [redirected.json().deliveryId, 'test', null, 'failed', 1, 302, 'the receiver answered 302, a redirect, which is not followed: save the URL it redirects to', null, null],
        [failed.json().deliveryId, 'test', null, 'failed', 1, 500, 'the receiver answered 500', null, null],
      ],
    )
    assert.deepEqual(
      deliveries.map((delivery) => delivery.log.map(({ ok, status, error }) => ({ ok, status, error }))),
      [
        [{ ok: false, status: null, error: 'no complete reply within 1000 ms' }],
        [{ ok: false, status: 302, error: 'the receiver answered 302, a redirect, which is not followed: save the URL it redirects to' }],
        [{ ok: false, status: 500, error: 'the receiver answered 500' }],
      ],
    )
    const limited = await call('GET', `/api/notification-channels/${channel.id}/deliveries?limit=1`)
    assert.equal(limited.json().deliveries.length, 1)
  })

  it('sends a test message once: no delivery worker finds it while the receiver takes its time', async () => {
    const channel = (await call('POST', '/api/notification-channels', { name: 'Slow', type: 'slack', url: receiver.url })).json()
    const before = receiver.requests.length
    let answerNow = () => {}
    receiver.answer = (_, response) => {
      answerNow = () => response.end('ok')
    }
    const sending = call('POST', `/api/notification-channels/${channel.id}/test`)
    for (const deadline = Date.now() + 5_000; receiver.requests.length === before;) {
      assert.ok(Date.now() < deadline, 'the test message reached the receiver')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    // A delivery worker looking now must find nothing to send: the test is the route's one try.
    assert.deepEqual(await claimDueDeliveries(cp.db, 100, 60_000), [])
    answerNow()
    const sent = await sending
    assert.equal(sent.json().ok, true)
    assert.equal(receiver.requests.length, before + 1)
  })

  it('sends an email test message that arrives at the SMTP server', async () => {
    const channel = (await call('POST', '/api/notification-channels', { name: 'Mail', type: 'email', address: 'oncall@example.com' })).json()
    assert.deepEqual([channel.type, channel.address, channel.url, channel.secretHint], ['email', 'oncall@example.com', null, null])
    const tested = await call('POST', `/api/notification-channels/${channel.id}/test`)
    assert.deepEqual([tested.json().ok, tested.json().status, tested.json().message], [true, 250, 'the mail server took the test message'])
    assert.deepEqual(smtp.mails.map((mail) => [mail.from, mail.to]), [['alerts@tracewell.test', ['oncall@example.com']]])
  })

  it('keeps each project’s channels to itself', async () => {
    const mine = (await call('GET', '/api/notification-channels')).json().notificationChannels as Array<{ id: string; name: string }>
    assert.deepEqual(mine.map((channel) => channel.name), ['Flaky', 'Mail', 'Set secret', 'Slow'])
    const id = mine[0]?.id as string
    for (const [method, path] of [['GET', `/api/notification-channels/${id}`], ['GET', `/api/notification-channels/${id}/deliveries`], ['POST', `/api/notification-channels/${id}/test`], ['DELETE', `/api/notification-channels/${id}`]] as const) {
      const response = await call(method, path, undefined, other.teamKey, other)
      assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Notification channel not found' }], `${method} ${path}`)
    }
    assert.deepEqual((await call('GET', '/api/notification-channels', undefined, other.teamKey, other)).json(), { notificationChannels: [] })
  })

  it('refuses webhook and email channels with 503 where the server cannot keep or send them', async () => {
    const bare = await startControlPlane({ OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' })
    try {
      const workspace = await seedWorkspace(bare.db, 'Bare')
      const post = (payload: object) =>
        bare.app.inject({ method: 'POST', url: `/api/notification-channels?project_id=${workspace.projectId}`, headers: { 'x-api-key': workspace.teamKey }, payload })
      const webhook = await post({ name: 'hook', type: 'webhook', url: receiver.url })
      assert.deepEqual([webhook.statusCode, webhook.headers['retry-after'], webhook.json()], [
        503,
        '3600',
        { message: 'Webhook channels need LLM_CONNECTION_ENCRYPTION_KEY set on the server, to keep their signing secrets sealed' },
      ])
      const email = await post({ name: 'mail', type: 'email', address: 'oncall@example.com' })
      assert.deepEqual([email.statusCode, email.json()], [503, { message: 'Email channels need SMTP_URL and MAIL_FROM set on the server' }])
      // Slack needs neither; without PUBLIC_URL the test message links the console's path.
      const slack = await post({ name: 'slack', type: 'slack', url: receiver.url })
      assert.equal(slack.statusCode, 201)
      receiver.requests.length = 0
      receiver.answer = (_, response) => response.end('ok')
      const tested = await bare.app.inject({
        method: 'POST',
        url: `/api/notification-channels/${slack.json().id}/test?project_id=${workspace.projectId}`,
        headers: { 'x-api-key': workspace.teamKey },
      })
      assert.equal(tested.json().ok, true)
      const message = JSON.parse(receiver.requests[0]?.body ?? '{}') as { text: string; blocks: unknown[] }
      assert.match(message.text, new RegExp(`^Monitor "Test notification from Tracewell" is a test: this channel works: /traces\\?project_id=${workspace.projectId}&from=`))
      assert.deepEqual((message.blocks.at(-1) as { type: string }).type, 'context')
      assert.deepEqual(await bare.db.selectFrom('notification_channels').select('type').execute(), [{ type: 'slack' }])
    } finally {
      await bare.close()
    }
  })
})
