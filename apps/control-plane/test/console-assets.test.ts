import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { startControlPlane, type TestControlPlane } from './helper.ts'

const secret = 'session-secret-for-tests-0123456789abcdef'
const page = '<!doctype html><html><head><script type="module" src="/assets/index-Ab12.js"></script></head><body><div id="root"></div></body></html>'
const script = `console.log(${JSON.stringify('x'.repeat(2000))})\n`

/** A console build of our own: what `vite build` writes, in small. */
function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tracewell-console-dist-'))
  mkdirSync(join(dir, 'assets'))
  writeFileSync(join(dir, 'index.html'), page)
  writeFileSync(join(dir, 'assets', 'index-Ab12.js'), script)
  writeFileSync(join(dir, 'assets', 'index-Ab12.js.gz'), gzipSync(script))
  return dir
}

describe('the console served by the control plane', () => {
  let cp: TestControlPlane
  const dist = fakeBuild()
  before(async () => (cp = await startControlPlane({ SESSION_SECRET: secret }, { consoleDistDir: dist })))
  after(async () => {
    await cp.close()
    rmSync(dist, { recursive: true, force: true })
  })

  it('serves the page at / with a strict content security policy, never cached stale', async () => {
    const response = await cp.app.inject({ url: '/' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(response.body, page)
    assert.equal(response.headers['cache-control'], 'no-cache')
    assert.equal(response.headers['x-frame-options'], 'DENY')
    assert.equal(response.headers['x-content-type-options'], 'nosniff')
    assert.match(String(response.headers['content-security-policy']), /^default-src 'self'; script-src 'self'; .*frame-ancestors 'none'$/)
  })

  it('serves the page for deep links, so a shared URL opens the console there', async () => {
    for (const url of ['/traces/0af7651916cd43dd8448eb211c80319c?project_id=p', '/sessions', '/settings/keys']) {
      const response = await cp.app.inject({ url })
      assert.deepEqual([response.statusCode, response.headers['content-type'], response.body], [200, 'text/html; charset=utf-8', page], url)
    }
  })

  it('serves hashed assets for a year, gzipped for clients that take it', async () => {
    const plain = await cp.app.inject({ url: '/assets/index-Ab12.js', headers: { 'accept-encoding': 'identity' } })
    assert.equal(plain.statusCode, 200)
    assert.equal(plain.body, script)
    assert.equal(plain.headers['content-type'], 'application/javascript; charset=utf-8')
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
    const gzipped = await cp.app.inject({ url: '/assets/index-Ab12.js', headers: { 'accept-encoding': 'gzip, br' } })
    assert.equal(gzipped.headers['content-encoding'], 'gzip')
    assert.equal(gunzipSync(gzipped.rawPayload).toString(), script)
  })

  it('answers JSON 404s for unknown API routes and assets, never the page', async () => {
    for (const [method, url] of [['GET', '/api/unknown'], ['GET', '/v1/nothing'], ['GET', '/assets/missing.js'], ['POST', '/traces'], ['DELETE', '/']] as const) {
      const response = await cp.app.inject({ method, url })
      const path = url.split('?')[0]
      assert.deepEqual([response.statusCode, response.json()], [404, { message: `Route ${method} ${path} not found` }], `${method} ${url}`)
    }
  })

  it('leaves the service endpoints as they were', async () => {
    const health = await cp.app.inject({ url: '/healthz' })
    assert.deepEqual([health.statusCode, health.json()], [200, { status: 'ok' }])
  })
})

describe('the console before it is built', () => {
  let cp: TestControlPlane
  const empty = mkdtempSync(join(tmpdir(), 'tracewell-console-unbuilt-'))
  before(async () => (cp = await startControlPlane({ SESSION_SECRET: secret }, { consoleDistDir: empty })))
  after(async () => {
    await cp.close()
    rmSync(empty, { recursive: true, force: true })
  })

  it('says how to build it', async () => {
    const response = await cp.app.inject({ url: '/' })
    assert.deepEqual([response.statusCode, response.body], [503, 'The console is not built: run `npm run build -w @tracewell/console`, then restart.\n'])
  })
})

describe('the control plane without SESSION_SECRET', () => {
  let cp: TestControlPlane
  before(async () => (cp = await startControlPlane({}, { consoleDistDir: fakeBuild() })))
  after(() => cp.close())

  it('serves no console', async () => {
    const response = await cp.app.inject({ url: '/' })
    assert.equal(response.statusCode, 404)
    assert.equal(response.json().message, 'Route GET:/ not found')
  })
})
