import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { HostLookup } from '@tracewell/outbound'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// LLM connections under the outbound policy: a base URL is checked as it is saved (400 naming the
// rule), and POST /api/llm-connections/:id/test tries one through the guard, answering its status
// and nothing of its reply. Host names resolve through a lookup the test controls: one name stays
// on the loopback address the settings allow, another moves to a private address after it is saved.

describe('LLM connections under the outbound policy', { timeout: 120_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let models: Server
  let port: number
  const addresses = new Map<string, string>([
    ['models.test', '127.0.0.1'],
    ['moving.test', '127.0.0.1'],
    ['inside.test', '10.1.2.3'],
    ['api.example.test', '93.184.215.14'],
  ])
  const lookup: HostLookup = async (host) => {
    const address = addresses.get(host)
    if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    return [{ address, family: 4 }]
  }
  // Connections are set up and tried with the team key (a project key may not: who may spend).
  const post = (url: string, payload?: unknown, as: Workspace = ws) =>
    cp.app.inject({ method: 'POST', url: `${url}${url.includes('?') ? '&' : '?'}project_id=${as.projectId}`, headers: { 'x-api-key': as.teamKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
  const create = (name: string, baseUrl: string, apiKey = 'sk-right-0123456789') => post('/api/llm-connections', { name, provider: 'openai', baseUrl, apiKey })

  before(async () => {
    models = createServer((request, response) => {
      if (request.url !== '/v1/models') return response.writeHead(404).end('no such route')
      if (request.headers.authorization !== 'Bearer sk-right-0123456789') return response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"secret internal detail"}}')
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"gpt-4o-mini","object":"model"}]}')
    })
    models.listen(0, '127.0.0.1')
    await once(models, 'listening')
    port = (models.address() as AddressInfo).port
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'), OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' }, { outboundLookup: lookup })
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(async () => {
    await cp?.close()
    models?.close()
  })

  it('refuses a base URL as it is saved, naming the rule', async () => {
    const cases: Array<[string, string]> = [
      ['http://inside.test/v1', 'body/baseUrl: inside.test resolves to 10.1.2.3, a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS'],
      ['http://169.254.169.254/latest/meta-data', 'body/baseUrl: 169.254.169.254 is a cloud metadata address; allow it with OUTBOUND_ALLOW_CIDRS'],
      [`http://127.0.0.2:${port}/v1`, 'body/baseUrl: 127.0.0.2 is a loopback address; allow it with OUTBOUND_ALLOW_CIDRS'],
      ['http://[fd00:ec2::254]/v1', 'body/baseUrl: fd00:ec2::254 is a cloud metadata address; allow it with OUTBOUND_ALLOW_CIDRS'],
      ['http://[::ffff:10.0.0.1]/v1', 'body/baseUrl: ::ffff:a00:1 is an IPv4-mapped address of 10.0.0.1, a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS'],
      ['http://nowhere.test/v1', 'body/baseUrl: nowhere.test does not resolve (ENOTFOUND)'],
      [`http://models.test:${port}/api/cleanup?`, 'body/baseUrl: must not have a query (?…): Tracewell appends the path of each call itself'],
      [`http://models.test:${port}/metrics?x=`, 'body/baseUrl: must not have a query (?…): Tracewell appends the path of each call itself'],
      [`http://models.test:${port}/metrics#`, 'body/baseUrl: must not have a fragment (#…): Tracewell appends the path of each call itself'],
      [`http://user:pw@models.test:${port}/v1`, 'body/baseUrl: must not hold credentials; send the key as apiKey'],
      ['file:///etc/passwd', 'body/baseUrl: must be http:// or https://, got file:'],
    ]
    for (const [baseUrl, message] of cases) {
      const response = await create('refused', baseUrl)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], baseUrl)
    }
    const saved = await create('public', 'https://API.example.test/v1/')
    assert.deepEqual([saved.statusCode, saved.json().baseUrl], [201, 'https://api.example.test/v1'])
  })

  it('tests a connection: its status, never its reply', async () => {
    const good = (await create('local', `http://models.test:${port}/v1`)).json().id as string
    const wrongKey = (await create('wrong key', `http://models.test:${port}/v1`, 'sk-wrong-0000')).json().id as string
    const wrongPath = (await create('wrong path', `http://models.test:${port}/v2`)).json().id as string
    const tested = async (id: string) => {
      const response = await post(`/api/llm-connections/${id}/test`)
      assert.equal(response.statusCode, 200, response.body)
      const { latencyMs, ...rest } = response.json()
      assert.ok(Number.isInteger(latencyMs) && latencyMs >= 0)
      return rest
    }
    assert.deepEqual(await tested(good), { ok: true, status: 200, message: 'the endpoint answered 200: the connection works' })
    assert.deepEqual(await tested(wrongKey), { ok: false, status: 401, message: 'the endpoint answered 401 (the API key was refused)' })
    assert.deepEqual(await tested(wrongPath), { ok: false, status: 404, message: 'the endpoint answered 404 (no such model, or the base URL is not the API’s)' })
    // A project key may not try it; another project's connection is not found.
    const asProject = await cp.app.inject({ method: 'POST', url: `/api/llm-connections/${good}/test`, headers: { 'x-api-key': ws.projectKey } })
    assert.equal(asProject.statusCode, 403)
    const foreign = await post(`/api/llm-connections/${good}/test`, undefined, other)
    assert.deepEqual([foreign.statusCode, foreign.json()], [404, { message: 'LLM connection not found' }])
  })

  it('answers ok=false when the name resolves to a refused address after it was saved, or nothing listens', async () => {
    const moving = (await create('moving', `http://moving.test:${port}/v1`)).json().id as string
    addresses.set('moving.test', '10.9.8.7')
    const refused = await post(`/api/llm-connections/${moving}/test`)
    assert.deepEqual({ ...(refused.json() as object), latencyMs: undefined }, {
      ok: false, status: null, latencyMs: undefined,
      message: 'the endpoint could not be called: moving.test resolves to 10.9.8.7, a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS',
    })
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const closedPort = (closed.address() as AddressInfo).port
    closed.close()
    const silent = (await create('nothing listens', `http://127.0.0.1:${closedPort}/v1`)).json().id as string
    assert.deepEqual({ ...((await post(`/api/llm-connections/${silent}/test`)).json() as object), latencyMs: undefined }, {
      ok: false, status: null, latencyMs: undefined, message: 'the endpoint could not be reached (ECONNREFUSED)',
    })
  })
})
