import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { getProjectIngestLimit } from '@tracewell/db'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

describe('a project’s ingest rate limit (team key)', { timeout: 60_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  const defaults = { spansPerSecond: 500, burst: 1000 }

  before(async () => {
    // A default rate of 500 with no burst set: the burst is twice the rate.
    cp = await startControlPlane({ INGEST_RATE_LIMIT_SPANS_PER_SECOND: '500' })
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  const url = (projectId = ws.projectId) => `/api/projects/${projectId}/ingest-limit`
  const asTeam = (method: 'GET' | 'PUT' | 'DELETE', path: string, payload?: object, key = ws.teamKey) =>
    cp.app.inject({ method, url: path, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })

  it('reads the default of the settings when the project has no limit of its own', async () => {
    const response = await asTeam('GET', url())
    assert.deepEqual([response.statusCode, response.json()], [200, { projectId: ws.projectId, source: 'default', ...defaults, default: defaults }])
  })

  it('stores a limit of the project’s own, burst twice the rate unless given, and reads it back', async () => {
    const set = await asTeam('PUT', url(), { spansPerSecond: 50 })
    assert.deepEqual([set.statusCode, set.json()], [200, { projectId: ws.projectId, source: 'project', spansPerSecond: 50, burst: 100, default: defaults }])
    const withBurst = await asTeam('PUT', url(), { spansPerSecond: 20, burst: 400 })
    assert.deepEqual(withBurst.json(), { projectId: ws.projectId, source: 'project', spansPerSecond: 20, burst: 400, default: defaults })
    assert.deepEqual((await asTeam('GET', url())).json(), withBurst.json())
    assert.deepEqual(await getProjectIngestLimit(cp.db, ws.projectId).then((row) => row && { ...row, updatedAt: undefined }), { projectId: ws.projectId, spansPerSecond: 20, burst: 400, updatedAt: undefined })
  })

  it('exempts the project from any limit with spansPerSecond null', async () => {
    const exempt = await asTeam('PUT', url(), { spansPerSecond: null })
    assert.deepEqual([exempt.statusCode, exempt.json()], [200, { projectId: ws.projectId, source: 'project', spansPerSecond: null, burst: null, default: defaults }])
  })

  it('DELETE goes back to the default: 204, also when there was nothing to delete', async () => {
    for (let i = 0; i < 2; i++) {
      const deleted = await asTeam('DELETE', url())
      assert.deepEqual([deleted.statusCode, deleted.body], [204, ''])
    }
    assert.equal((await asTeam('GET', url())).json().source, 'default')
    assert.equal(await getProjectIngestLimit(cp.db, ws.projectId), undefined)
  })

  it('validates the body: integers in range, no burst without a rate, nothing else', async () => {
    const cases: [object, string][] = [
      [{ spansPerSecond: 0 }, 'body/spansPerSecond: must be >= 1'],
      [{ spansPerSecond: 10_000_001 }, 'body/spansPerSecond: must be <= 10000000'],
      [{ spansPerSecond: 1.5 }, 'body/spansPerSecond: must be integer'],
      [{ spansPerSecond: '10' }, 'body/spansPerSecond: must be integer'],
      [{ spansPerSecond: 10, burst: 0 }, 'body/burst: must be >= 1'],
      [{ spansPerSecond: null, burst: 10 }, 'body/burst: must be absent when spansPerSecond is null (no limit)'],
      [{ burst: 10 }, "body: must have required property 'spansPerSecond'"],
      [{ spansPerSecond: 10, rate: 5 }, 'body: must NOT have additional properties'],
    ]
    for (const [payload, message] of cases) {
      const response = await asTeam('PUT', url(), payload)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
    }
    assert.equal(await getProjectIngestLimit(cp.db, ws.projectId), undefined, 'nothing stored')
  })

  it('hides another team’s project and unknown ones (404), refuses project keys a change (403) and no key (401)', async () => {
    for (const response of [
      await asTeam('GET', url(other.projectId)),
      await asTeam('PUT', url(other.projectId), { spansPerSecond: 1 }),
      await asTeam('DELETE', url(other.projectId)),
      await asTeam('GET', url('unknown')),
    ]) {
      assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Project not found' }])
    }
    assert.equal((await asTeam('PUT', url(), { spansPerSecond: 1 }, ws.projectKey)).statusCode, 403)
    assert.equal((await cp.app.inject({ method: 'GET', url: url() })).statusCode, 401)
    assert.equal(await getProjectIngestLimit(cp.db, other.projectId), undefined)
  })

  it('is in the OpenAPI document with a response per status', async () => {
    const document = (await cp.app.inject({ url: '/docs/json' })).json()
    const path = document.paths['/api/projects/{projectId}/ingest-limit']
    assert.deepEqual(Object.keys(path).sort(), ['delete', 'get', 'put'])
    assert.deepEqual(Object.keys(path.get.responses).sort(), ['200', '400', '401', '403', '404', '500', '503'])
    assert.deepEqual(Object.keys(path.put.responses).sort(), ['200', '400', '401', '403', '404', '500', '503'])
    assert.deepEqual(Object.keys(path.delete.responses).sort(), ['204', '400', '401', '403', '404', '500', '503'])
    assert.deepEqual(Object.keys(path.put.requestBody.content['application/json'].schema.properties), ['spansPerSecond', 'burst'])
  })

  it('reads no limit at all when the settings set no default', async () => {
    const plain = await startControlPlane()
    try {
      const team = await seedWorkspace(plain.db, 'Plain')
      const response = await plain.app.inject({ method: 'GET', url: url(team.projectId), headers: { 'x-api-key': team.teamKey } })
      const none = { spansPerSecond: null, burst: null }
      assert.deepEqual(response.json(), { projectId: team.projectId, source: 'default', ...none, default: none })
    } finally {
      await plain.close()
    }
  })
})
