import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApp, installErrorHandler, messageBody } from '../src/index.ts'

/** An app whose log lines are collected, parsed, instead of written to standard output. */
function appWithCapturedLogs(logLevel: string) {
  const lines: Record<string, unknown>[] = []
  const app = createApp({ logLevel, logDestination: { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) } })
  installErrorHandler(app, messageBody)
  app.get('/ok', async () => ({ ok: true }))
  app.get('/boom', async () => {
    throw new Error('secret detail')
  })
  app.get('/warns', async (request) => {
    request.log.warn({ reason: 'something odd' }, 'odd request')
    request.log.child({ step: 'inner' }).warn('inner step')
    return { ok: true }
  })
  app.get('/debug-route', { logLevel: 'debug' }, async (request) => {
    request.log.debug('route-level debug')
    return { ok: true }
  })
  return { app, lines }
}

describe('request loggers', () => {
  it('log a 5xx with the request id the answer carries', async () => {
    const { app, lines } = appWithCapturedLogs('warn')
    const response = await app.inject({ url: '/boom' })
    assert.equal(response.statusCode, 500)
    const requestId = /\(request ([^)]+)\)/.exec(response.json<{ message: string }>().message)?.[1]
    assert.ok(requestId)
    const logged = lines.find((line) => line.msg === 'request failed')
    assert.equal(logged?.reqId, requestId)
    assert.equal((logged?.err as { message?: string } | undefined)?.message, 'secret detail')
  })

  it('make no pino child for requests that log nothing at the configured level', async () => {
    const { app, lines } = appWithCapturedLogs('warn')
    await app.ready()
    // Counts the per-request children (the ones binding a request id) made from the app's logger.
    let children = 0
    const child = app.log.child
    app.log.child = function (this: typeof app.log, ...args: Parameters<typeof child>) {
      if ('reqId' in args[0]) children++
      return child.apply(this, args)
    }
    for (let i = 0; i < 5; i++) assert.equal((await app.inject({ url: '/ok' })).statusCode, 200)
    assert.equal(children, 0)
    assert.deepEqual(lines, [])
    await app.inject({ url: '/warns', headers: { 'x-request-id': 'req-7' } })
    assert.equal(children, 1)
    assert.deepEqual(
      lines.map(({ msg, reqId, reason, step }) => ({ msg, reqId, reason, step })),
      [
        { msg: 'odd request', reqId: 'req-7', reason: 'something odd', step: undefined },
        { msg: 'inner step', reqId: 'req-7', reason: undefined, step: 'inner' },
      ],
    )
  })

  it('log every request with its id at info, and honour a route’s own log level', async () => {
    const { app, lines } = appWithCapturedLogs('info')
    await app.inject({ url: '/ok', headers: { 'x-request-id': 'req-1', 'x-api-key': 'tw_proj_secret' } })
    assert.deepEqual(
      lines.map(({ msg, reqId }) => ({ msg, reqId })),
      [
        { msg: 'incoming request', reqId: 'req-1' },
        { msg: 'request completed', reqId: 'req-1' },
      ],
    )
    assert.ok(!JSON.stringify(lines).includes('tw_proj_secret'))
    lines.length = 0
    await app.inject({ url: '/debug-route', headers: { 'x-request-id': 'req-2' } })
    assert.ok(lines.some((line) => line.msg === 'route-level debug' && line.reqId === 'req-2'))
  })
})
