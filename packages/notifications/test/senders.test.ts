import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sealSecret } from '@tracewell/auth'
import { simpleParser } from 'mailparser'
import { createOutbound } from '@tracewell/outbound'
import { createChannelSender, signWebhookBody, slackMessage, verifyWebhookSignature, type Notification, type StoredChannel } from '../src/index.ts'
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from '@tracewell/test-support'

// The three senders against real receivers on 127.0.0.1 (allowed with OUTBOUND_ALLOW_CIDRS's
// 127.0.0.1/32), and the signature helper receivers verify with.

const key = Buffer.alloc(32, 7)
const context = (projectId: string) => `notification-channel:${projectId}`
const secret = 'whsec_test-secret-0123456789abcdef'
const notification: Notification = {
  monitor: { id: 'mon-1', name: 'Checkout errors' },
  state: 'alerting',
  event: 'alerting',
  value: 0.25,
  threshold: 0.1,
  window: { from: '2026-12-06T03:00:00.000Z', to: '2026-12-06T03:05:00.000Z' },
  url: 'https://tracewell.example.com/traces?project_id=p1&status=error',
}
const webhookChannel = (url: string): StoredChannel => ({ projectId: 'p1', type: 'webhook', url, address: null, secretSealed: sealSecret(secret, key, context('p1')) })

describe('notification senders', () => {
  let receiver: HttpReceiver
  let smtp: SmtpReceiver
  const outbound = createOutbound({ allowCidrs: '127.0.0.1/32', maxResponseBytes: 4096, connectTimeoutMs: 2_000 })
  let sender: ReturnType<typeof createChannelSender>

  before(async () => {
    receiver = await startHttpReceiver()
    smtp = await startSmtpReceiver()
    sender = createChannelSender({ outbound, timeoutMs: 500, email: { smtpUrl: smtp.url, from: 'Tracewell <alerts@tracewell.test>' }, encryptionKey: key, secretContext: context })
  })
  after(async () => {
    sender.close()
    await outbound.close()
    await receiver.close()
    await smtp.close()
  })

  it('signs a webhook body as Stripe does; the helper verifies it and refuses an old or altered one', async () => {
    receiver.requests.length = 0
    receiver.answer = (_, response) => response.end('thanks')
    const outcome = await sender.send(webhookChannel(receiver.url), notification, 'delivery-1')
    assert.equal(outcome.ok, true)
    assert.equal(outcome.status, 200)
    const [request] = receiver.requests
    assert.ok(request)
    assert.equal(request.headers['content-type'], 'application/json')
    assert.equal(request.headers['x-tracewell-delivery'], 'delivery-1')
    assert.deepEqual(JSON.parse(request.body), notification)
    const header = request.headers['x-tracewell-signature'] as string
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/)
    assert.equal(verifyWebhookSignature(header, request.body, secret).ok, true)
    assert.deepEqual(verifyWebhookSignature(header, request.body, 'another secret'), { ok: false, reason: 'no v1 signature matches the body with this secret' })
    assert.deepEqual(verifyWebhookSignature(header, `${request.body} `, secret), { ok: false, reason: 'no v1 signature matches the body with this secret' })

    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 360
    const old = signWebhookBody(request.body, secret, sixMinutesAgo)
    assert.deepEqual(verifyWebhookSignature(old, request.body, secret, { nowSeconds: sixMinutesAgo + 360 }), { ok: false, reason: 'the signature is 360 s old, more than 300 s' })
    assert.equal(verifyWebhookSignature(old, request.body, secret, { nowSeconds: sixMinutesAgo + 299 }).ok, true)
    assert.deepEqual(verifyWebhookSignature(undefined, request.body, secret), { ok: false, reason: 'no x-tracewell-signature header' })
  })

  it('posts a Slack incoming-webhook message with text, figures and a button to the traces', async () => {
    receiver.requests.length = 0
    const outcome = await sender.send({ projectId: 'p1', type: 'slack', url: receiver.url, address: null, secretSealed: null }, notification, 'delivery-1')
    assert.equal(outcome.ok, true)
    const body = JSON.parse(receiver.requests[0]?.body ?? '{}')
    assert.deepEqual(body, {
      text: 'Monitor "Checkout errors" is alerting: value 0.25, threshold 0.1: https://tracewell.example.com/traces?project_id=p1&status=error',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: '*Monitor "Checkout errors" is alerting: value 0.25, threshold 0.1*' } },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: '*State*\nalerting' },
            { type: 'mrkdwn', text: '*Value*\n0.25' },
            { type: 'mrkdwn', text: '*Threshold*\n0.1' },
            { type: 'mrkdwn', text: '*Window*\n2026-12-06T03:00:00.000Z – 2026-12-06T03:05:00.000Z' },
          ],
        },
        { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the traces' }, url: notification.url }] },
      ],
    })
    // Slack links only absolute URLs: a console path (no PUBLIC_URL) is given as text, escaped.
    const relative = slackMessage({ ...notification, monitor: { id: 'm', name: 'a <b> & c' }, url: '/traces?project_id=p1' })
    assert.deepEqual(relative.blocks.at(-1), { type: 'context', elements: [{ type: 'mrkdwn', text: 'Traces: /traces?project_id=p1 on the Tracewell console' }] })
    assert.deepEqual(relative.blocks[0], { type: 'section', text: { type: 'mrkdwn', text: '*Monitor "a &lt;b&gt; &amp; c" is alerting: value 0.25, threshold 0.1*' } })
  })

  it('sends an email that arrives at a real SMTP server', async () => {
    const outcome = await sender.send({ projectId: 'p1', type: 'email', url: null, address: 'oncall@example.com', secretSealed: null }, notification, 'delivery-1')
    assert.equal(outcome.ok, true, outcome.error ?? '')
    assert.equal(smtp.mails.length, 1)
    const [mail] = smtp.mails
    assert.equal(mail?.from, 'alerts@tracewell.test')
    assert.deepEqual(mail?.to, ['oncall@example.com'])
    const parsed = await simpleParser(mail?.data ?? '')
    assert.equal(parsed.subject, '[Tracewell] Monitor "Checkout errors" is alerting: value 0.25, threshold 0.1')
    assert.equal(
      parsed.text,
      [
        'Monitor "Checkout errors" is alerting: value 0.25, threshold 0.1',
        '',
        'State: alerting',
        'Value: 0.25',
        'Threshold: 0.1',
        'Window: 2026-12-06T03:00:00.000Z – 2026-12-06T03:05:00.000Z',
        '',
        'The traces: https://tracewell.example.com/traces?project_id=p1&status=error',
        '',
      ].join('\n'),
    )
  })

  it('gives up on a receiver that hangs at the timeout, retryably', async () => {
    receiver.answer = () => {}
    const started = Date.now()
    const outcome = await sender.send(webhookChannel(receiver.url), notification, 'delivery-1')
    const took = Date.now() - started
    assert.deepEqual({ ...outcome, durationMs: 0 }, { ok: false, status: null, error: 'no complete reply within 500 ms', retryable: true, durationMs: 0 })
    assert.ok(took >= 450 && took < 2_000, `took ${took} ms`)
  })

  it('counts a 500 as a retryable failure and a redirect as a final one, never followed', async () => {
    receiver.answer = (_, response) => response.writeHead(500).end('boom')
    assert.deepEqual({ ...(await sender.send(webhookChannel(receiver.url), notification, 'delivery-1')), durationMs: 0 }, {
      ok: false,
      status: 500,
      error: 'the receiver answered 500',
      retryable: true,
      durationMs: 0,
    })
    const elsewhere = await startHttpReceiver()
    try {
      receiver.answer = (_, response) => response.writeHead(307, { location: elsewhere.url }).end()
      const outcome = await sender.send(webhookChannel(receiver.url), notification, 'delivery-1')
      assert.deepEqual({ ...outcome, durationMs: 0 }, {
        ok: false,
        status: 307,
        error: 'the receiver answered 307, a redirect, which is not followed: save the URL it redirects to',
        retryable: false,
        durationMs: 0,
      })
      assert.equal(elsewhere.requests.length, 0)
    } finally {
      await elsewhere.close()
    }
  })

  it('refuses a loopback receiver when OUTBOUND_ALLOW_CIDRS does not allow it', async () => {
    const strict = createOutbound({ allowCidrs: '', maxResponseBytes: 4096, connectTimeoutMs: 2_000 })
    const strictSender = createChannelSender({ outbound: strict, timeoutMs: 500, email: undefined, encryptionKey: key, secretContext: context })
    try {
      const before = receiver.requests.length
      const outcome = await strictSender.send(webhookChannel(receiver.url), notification, 'delivery-1')
      assert.equal(outcome.ok, false)
      assert.equal(outcome.retryable, false)
      assert.equal(outcome.error, '127.0.0.1 is a loopback address; allow it with OUTBOUND_ALLOW_CIDRS')
      assert.equal(receiver.requests.length, before)
    } finally {
      await strict.close()
    }
  })
})
