import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Headers that keep trace data out of caches and browsers' content sniffing, the API document's
// page confined by a CSP, and JSON bodies that are only read as what they say they are.

describe('response headers', () => {
  let cp: TestControlPlane
  let ws: Workspace

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: 'a-session-secret-for-tests-0123456789' })
    ws = await seedWorkspace(cp.db)
  })
  after(() => cp.close())

  it('marks API answers with trace data no-store and nosniff, errors included', async () => {
    for (const url of ['/api/traces', `/api/traces/${'a'.repeat(32)}`, '/api/sessions', '/api/usage', '/api/nope']) {
      const response = await cp.app.inject({ url, headers: { 'x-api-key': ws.projectKey } })
      assert.equal(response.headers['cache-control'], 'no-store', url)
      assert.equal(response.headers['x-content-type-options'], 'nosniff', url)
    }
    const projects = await cp.app.inject({ url: '/api/projects', headers: { 'x-api-key': ws.teamKey } })
    assert.equal(projects.headers['cache-control'], 'no-store')
  })

  it('leaves the console its own caching', async () => {
    const page = await cp.app.inject({ url: '/' })
    assert.equal(page.headers['cache-control'], 'no-cache')
    assert.equal(page.headers['x-content-type-options'], 'nosniff')
  })

  it('serves /docs with a Content-Security-Policy that admits its own scripts only and no framing', async () => {
    let response = await cp.app.inject({ url: '/docs' })
    if (response.statusCode === 302) response = await cp.app.inject({ url: new URL(String(response.headers.location), 'http://x/docs/').pathname })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^text\/html/)
    const csp = String(response.headers['content-security-policy'] ?? '')
    assert.match(csp, /default-src 'self'/)
    assert.match(csp, /script-src 'self'/)
    assert.match(csp, /object-src 'none'/)
    assert.match(csp, /frame-ancestors 'none'/)
    assert.doesNotMatch(csp, /upgrade-insecure-requests/, 'a plain-http deployment must keep working')
  })

  it('refuses a JSON body declared in another charset with 415, and takes charset=utf-8', async () => {
    const post = (contentType: string, payload: string | Buffer) =>
      cp.app.inject({ method: 'POST', url: '/api/projects', headers: { 'x-api-key': ws.teamKey, 'content-type': contentType }, payload })
    const refused = await post('application/json; charset=utf-16', Buffer.from(JSON.stringify({ name: 'p' }), 'utf16le'))
    assert.equal(refused.statusCode, 415)
    assert.deepEqual(refused.json(), { message: "Unsupported charset 'utf-16' in Content-Type; JSON bodies must be UTF-8 (charset=utf-8 or none)" })
    assert.equal((await post('application/json; charset="UTF-8"', JSON.stringify({ name: 'p' }))).statusCode, 201)
  })
})
