import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { createDb, sql, type Db } from '@tracewell/db'
import { startTcpProxy, type TcpProxy } from '@tracewell/test-support'
import type { App } from '@tracewell/http'
import { buildApp } from '../src/index.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// What the query routes answer when a query cannot be served: a Postgres outage, a query past
// its statement timeout, a filter that would scan every span, a number past any bound.

const traceId = 'a'.repeat(32)
const queryRoutes = ['/api/traces', `/api/traces/${traceId}`, `/api/traces/${traceId}/otlp`, '/api/sessions', '/api/sessions/s-1', '/api/usage']

describe('query routes during a Postgres outage', () => {
  let cp: TestControlPlane
  let proxy: TcpProxy
  let db: Db
  let app: App
  let ws: Workspace

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db)
    const url = new URL(cp.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) })
    url.port = String(proxy.port)
    db = createDb({ databaseUrl: url.toString(), poolSize: 2 })
    app = await buildApp(loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' }), { db })
    await app.ready()
  })
  after(async () => {
    await app.close()
    await db.destroy()
    await proxy.close()
    await cp.close()
  })

  it('answers 503 with Retry-After, not 500, on every query route', async () => {
    const get = (url: string, headers: Record<string, string> = { 'x-api-key': ws.projectKey }) => app.inject({ url, headers })
    // The keys are verified while Postgres answers, so the outage meets the queries themselves.
    assert.equal((await get('/api/traces')).statusCode, 200)
    assert.equal((await get(`/api/projects`, { 'x-api-key': ws.teamKey })).statusCode, 200)
    proxy.setDown(true)
    for (const url of [...queryRoutes, `/api/traces?project_id=${ws.projectId}`]) {
      const response = await get(url, url.includes('project_id') ? { 'x-api-key': ws.teamKey } : undefined)
      assert.equal(response.statusCode, 503, url)
      assert.equal(response.headers['retry-after'], '5', url)
      assert.deepEqual(response.json(), { message: 'The database cannot be reached right now; retry after 5 s' }, url)
    }
    proxy.setDown(false)
    assert.equal((await get('/api/traces')).statusCode, 200, 'answers again once Postgres is back')
  })
})

describe('query bounds', () => {
  let cp: TestControlPlane
  let ws: Workspace
  const get = (url: string) => cp.app.inject({ url, headers: { 'x-api-key': ws.projectKey } })

  before(async () => {
    cp = await startControlPlane({ QUERY_TIMEOUT_MS: '200' })
    ws = await seedWorkspace(cp.db)
  })
  after(() => cp.close())

  it('refuses numbers past any bound with a 400 naming the field (1e999 is Infinity once parsed)', async () => {
    for (const field of ['min_duration_ms', 'min_cost']) {
      const response = await get(`/api/traces?${field}=1e999`)
      assert.equal(response.statusCode, 400, field)
      assert.deepEqual(response.json(), { message: `querystring/${field}: must be <= 1000000000000` })
    }
  })

  it('refuses text search without a word, which would read every span of the project', async () => {
    for (const q of ["'", '%', '=', '%%__', ' - ']) {
      const response = await get(`/api/traces?q=${encodeURIComponent(q)}`)
      assert.equal(response.statusCode, 400, q)
      assert.deepEqual(response.json(), {
        message: 'querystring/q: needs a word (letters or digits) to look for; text of punctuation alone would be looked for in every span',
      })
    }
    assert.equal((await get('/api/traces?q=a%25')).statusCode, 200, 'a word with punctuation is searched')
  })

  it('stops a query past QUERY_TIMEOUT_MS in Postgres and answers 400, never a stuck request', async () => {
    // A transaction holding the summaries' lock makes every trace query wait: statement_timeout
    // counts the wait, so the query is cancelled after 200 ms rather than waiting for the lock.
    const blocker = createDb({ databaseUrl: cp.url, poolSize: 1 })
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let locked!: () => void
    const lockHeld = new Promise<void>((resolve) => (locked = resolve))
    const holder = blocker.transaction().execute(async (trx) => {
      await sql`lock table trace_summaries, session_summaries, usage_rollups, spans in access exclusive mode`.execute(trx)
      locked()
      await released
    })
    try {
      await lockHeld
      for (const url of ['/api/traces', '/api/sessions', '/api/usage', `/api/traces/${traceId}`]) {
        const started = performance.now()
        const response = await get(url)
        const elapsed = performance.now() - started
        assert.equal(response.statusCode, 400, url)
        assert.match(response.json().message, /^query: took longer than the query time limit \(QUERY_TIMEOUT_MS\)/, url)
        assert.ok(elapsed < 5_000, `${url} answered after ${elapsed} ms`)
      }
      // Nothing of those requests is left waiting in Postgres (usage runs its queries together:
      // none of them may outlive the failed one outside the timeout).
      const { rows: waiting } = await sql<{ count: string }>`
        select count(*)::text as count from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(cp.db)
      assert.equal(waiting[0]?.count, '0')
    } finally {
      release()
      await holder
      await blocker.destroy()
    }
    assert.equal((await get('/api/traces')).statusCode, 200, 'the pool keeps no timeout once the lock is gone')
    const { rows } = await sql<{ timeout: string }>`select current_setting('statement_timeout') as timeout`.execute(cp.db)
    assert.equal(rows[0]?.timeout, '0', 'other users of the pool keep theirs')
  })
})
