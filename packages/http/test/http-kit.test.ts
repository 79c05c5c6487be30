import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Type } from '@sinclair/typebox'
import { createApp, healthPlugin, installErrorHandler, metricsPlugin, trustProxyOf, NotFoundError, statusAndMessageBody, TooManyRequestsError } from '../src/index.ts'

function buildTestApp(readiness: Record<string, () => Promise<unknown>> = {}) {
  const app = createApp({ logger: false })
  installErrorHandler(app, statusAndMessageBody)
  void app.register(metricsPlugin)
  void app.register(healthPlugin, { readinessChecks: readiness, checkTimeoutMs: 100 })
  app.get('/boom', async () => {
    throw new Error('secret detail from SELECT * FROM keys')
  })
  app.get('/missing', async () => {
    throw new NotFoundError('Project not found')
  })
  app.get('/busy', async () => {
    throw new TooManyRequestsError('Queue backlog is full', 2)
  })
  app.get('/typed', { schema: { querystring: Type.Object({ version: Type.Integer({ minimum: 1 }) }) } }, async () => ({ ok: true }))
  return app
}

describe('http kit', () => {
  it("answers in the shape of a route's response schema, from the first reply on", async () => {
    // Serializers are compiled by a route's first reply with a status (serializers-on-first-use.ts):
    // that reply and the next must both leave out what the schema does not name, and type what it does.
    const app = createApp({ logger: false })
    const Reply = Type.Object({ id: Type.String(), count: Type.Integer() })
    const found = { id: 'a', count: 2, secret: 'not in the schema' }
    const gone = { message: 'gone', stack: 'internal' }
    app.get('/shaped', { schema: { response: { 200: Reply, 404: Type.Object({ message: Type.String() }) } } }, async (request, reply) =>
      (request.query as { missing?: string }).missing === undefined ? found : reply.code(404).send(gone),
    )
    for (let round = 0; round < 2; round++) {
      const shaped = await app.inject({ url: '/shaped' })
      assert.equal(shaped.statusCode, 200)
      assert.equal(shaped.body, '{"id":"a","count":2}')
      const missing = await app.inject({ url: '/shaped?missing=1' })
      assert.equal(missing.statusCode, 404)
      assert.equal(missing.body, '{"message":"gone"}')
    }
    await app.close()
  })

  it('believes X-Forwarded-For only from the proxies TRUST_PROXY names', async () => {
    const addressOf = async (setting: string | undefined, remoteAddress: string) => {
      const app = createApp({ logger: false, trustProxy: trustProxyOf(setting) })
      app.get('/ip', async (request) => ({ ip: request.ip }))
      return (await app.inject({ url: '/ip', remoteAddress, headers: { 'x-forwarded-for': '203.0.113.7' } })).json<{ ip: string }>().ip
    }
    assert.equal(await addressOf(undefined, '10.0.0.5'), '10.0.0.5')
    assert.equal(await addressOf('false', '10.0.0.5'), '10.0.0.5')
    assert.equal(await addressOf('10.0.0.0/8, 127.0.0.1', '10.0.0.5'), '203.0.113.7')
    assert.equal(await addressOf('10.0.0.0/8', '192.0.2.1'), '192.0.2.1')
    assert.equal(await addressOf('true', '192.0.2.1'), '203.0.113.7')
  })

  it('hides 5xx details behind a request id', async () => {
    const app = buildTestApp()
    const response = await app.inject({ url: '/boom', headers: { 'x-request-id': 'req-42' } })
    assert.equal(response.statusCode, 500)
    assert.deepEqual(response.json(), { status: 500, message: 'Internal server error (request req-42)' })
  })

  it('gives each request a distinct UUID as its id when the caller sends none', async () => {
    const app = buildTestApp()
    const ids = new Set<string>()
    for (let i = 0; i < 50; i++) {
      const message = (await app.inject({ url: '/boom' })).json<{ message: string }>().message
      const id = /\(request ([^)]+)\)/.exec(message)?.[1] ?? ''
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      ids.add(id)
    }
    assert.equal(ids.size, 50)
    const other = /\(request ([^)]+)\)/.exec((await buildTestApp().inject({ url: '/boom' })).json<{ message: string }>().message)?.[1] ?? ''
    assert.ok(!ids.has(other), 'another app (another process) draws its own ids')
  })

  it('keeps client error messages and statuses, with Retry-After when asked', async () => {
    const app = buildTestApp()
    assert.deepEqual((await app.inject({ url: '/missing' })).json(), { status: 404, message: 'Project not found' })
    const busy = await app.inject({ url: '/busy' })
    assert.equal(busy.statusCode, 429)
    assert.equal(busy.headers['retry-after'], '2')
  })

  it('names the field that failed validation', async () => {
    const app = buildTestApp()
    const response = await app.inject({ url: '/typed?version=abc' })
    assert.equal(response.statusCode, 400)
    assert.deepEqual(response.json(), { status: 400, message: 'querystring/version: must be integer' })
  })

  it('reports readiness per dependency', async () => {
    const ready = buildTestApp({ postgres: async () => 1 })
    assert.deepEqual((await ready.inject({ url: '/readyz' })).json(), { status: 'ok', checks: { postgres: 'ok' } })
    const down = buildTestApp({ postgres: async () => 1, redis: () => Promise.reject(new Error('connection refused')), slow: () => new Promise(() => {}) })
    const response = await down.inject({ url: '/readyz' })
    assert.equal(response.statusCode, 503)
    assert.deepEqual(response.json(), { status: 'unavailable', checks: { postgres: 'ok', redis: 'connection refused', slow: 'no answer within 100 ms' } })
    assert.deepEqual((await down.inject({ url: '/healthz' })).json(), { status: 'ok' })
  })

  it('serves Prometheus metrics including request durations', async () => {
    const app = buildTestApp()
    await app.inject({ url: '/missing' })
    const response = await app.inject({ url: '/metrics' })
    assert.equal(response.statusCode, 200)
    assert.match(response.headers['content-type'] ?? '', /^text\/plain/)
    assert.match(response.body, /tracewell_http_request_duration_seconds_count\{method="GET",route="\/missing",status="404"\} 1/)
    assert.match(response.body, /process_cpu_user_seconds_total/)
  })
})
