import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { countSpans, getCleanupStatus, latestCleanupRun } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { buildApp, OPEN_ENDPOINT_WARNING } from '../src/index.ts'
import { dayMs, janitorConfig, project, seedSpans } from './helpers.ts'

const cronKey = 'cron-secret-0123456789abcdef0123456789abcdef'
const url = '/api/cron/cleanup-traces'

describe('cron-api-key', () => {
  let testDb: TestDatabase
  let app: App
  let projectId: string
  before(async () => {
    testDb = await createTestDatabase()
    app = await buildApp(janitorConfig(testDb.url, { CRON_API_KEY: cronKey }), { db: testDb.db })
    projectId = await project(testDb.db, 'guarded', { enabled: true, retentionDays: 1 })
    await seedSpans(testDb.db, projectId, 4, new Date(Date.now() - 3 * dayMs))
  })
  after(async () => {
    await app.close()
    await testDb.drop()
  })

  for (const method of ['GET', 'POST'] as const) {
    it(`${method}: a missing key is 401 Missing API key, and nothing is deleted`, async () => {
      for (const headers of [{}, { 'cron-api-key': '' }]) {
        const response = await app.inject({ method, url, headers })
        assert.equal(response.statusCode, 401)
        assert.deepEqual(response.json(), { message: 'Unauthorized. Missing API key' })
      }
      assert.equal(await countSpans(testDb.db, projectId), 4)
    })

    it(`${method}: a wrong key is 401 Invalid API key`, async () => {
      for (const presented of ['wrong', cronKey.slice(0, -1), `${cronKey}x`, cronKey.toUpperCase()]) {
        const response = await app.inject({ method, url, headers: { 'cron-api-key': presented } })
        assert.equal(response.statusCode, 401)
        assert.deepEqual(response.json(), { message: 'Unauthorized. Invalid API key' })
      }
      // Another credential's header is not the cron key.
      const other = await app.inject({ method, url, headers: { 'x-api-key': cronKey } })
      assert.deepEqual(other.json(), { message: 'Unauthorized. Missing API key' })
      assert.equal(await countSpans(testDb.db, projectId), 4)
    })
  }

  it('the right key runs the cleanup, recorded as a run of a request', async () => {
    const before = Date.now()
    const response = await app.inject({ method: 'POST', url, headers: { 'cron-api-key': cronKey } })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().deletedSpans, 4)
    assert.equal(await countSpans(testDb.db, projectId), 0)
    const run = await latestCleanupRun(testDb.db)
    assert.ok(run && Date.parse(run.startedAt) >= before - 1_000 && Date.parse(run.finishedAt) >= Date.parse(run.startedAt))
    assert.deepEqual({ ...run, startedAt: 'x', finishedAt: 'x' }, { startedAt: 'x', finishedAt: 'x', trigger: 'request', outcome: 'complete', deletedSpans: 4, droppedPartitions: 0 })
  })

  it('says the endpoint asks for the key in /readyz and to the console', async () => {
    const ready = await app.inject({ url: '/readyz' })
    assert.deepEqual(ready.json().details, { cleanup: { endpoint: 'cron-api-key', schedule: null, nextRunAt: null } })
    assert.deepEqual({ ...(await getCleanupStatus(testDb.db)), updatedAt: 'x' }, { endpointOpen: false, schedule: null, nextRunAt: null, updatedAt: 'x' })
  })

  it('with no key configured the endpoint is open, and /readyz and the console are told', async () => {
    const open = await buildApp(janitorConfig(testDb.url, { CRON_API_KEY: '' }), { db: testDb.db })
    const response = await open.inject({ url, headers: { 'cron-api-key': 'anything' } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json().success, true)
    assert.equal((await open.inject({ url })).statusCode, 200)
    const ready = await open.inject({ url: '/readyz' })
    assert.deepEqual(ready.json().details, { cleanup: { endpoint: 'open', schedule: null, nextRunAt: null, warning: OPEN_ENDPOINT_WARNING } })
    await open.close()
    assert.equal((await getCleanupStatus(testDb.db))?.endpointOpen, true)
  })
})
