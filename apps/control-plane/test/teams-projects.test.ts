import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { hashApiKey } from '@tracewell/auth'
import { findApiKeyIdentityByHash, getRetentionPolicy, listTeamProjects, recordCleanupRun, saveCleanupStatus } from '@tracewell/db'
import { adminKey, seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

describe('teams, projects and retention settings', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  const asTeam = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, key = ws.teamKey) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })

  describe('POST /api/teams', () => {
    it('creates a team and its first team key with the admin key (201)', async () => {
      const response = await cp.app.inject({ method: 'POST', url: '/api/teams', headers: { 'x-admin-key': adminKey }, payload: { name: 'New team' } })
      assert.equal(response.statusCode, 201)
      const team = response.json()
      assert.deepEqual(Object.keys(team), ['id', 'name', 'createdAt', 'apiKey'])
      assert.equal(team.name, 'New team')
      assert.match(team.apiKey, /^tw_team_/)
      assert.deepEqual({ ...(await findApiKeyIdentityByHash(cp.db, hashApiKey(team.apiKey))), id: 'x' }, { id: 'x', kind: 'team', teamId: team.id, projectId: null, revoked: false, scopes: null, createdByUserId: null, expiresAt: null })
      const projects = await asTeam('GET', '/api/projects', undefined, team.apiKey)
      assert.deepEqual([projects.statusCode, projects.json()], [200, { projects: [] }])
    })

    it('refuses a missing or wrong admin key, and team keys (401)', async () => {
      for (const headers of [{}, { 'x-admin-key': 'wrong' }, { 'x-admin-key': `${adminKey}x` }, { 'x-api-key': ws.teamKey }]) {
        const response = await cp.app.inject({ method: 'POST', url: '/api/teams', headers, payload: { name: 'x' } })
        assert.deepEqual([response.statusCode, response.json()], [401, { message: 'Invalid admin key unauthorized' }])
      }
    })

    it('answers 400 for a missing name', async () => {
      const response = await cp.app.inject({ method: 'POST', url: '/api/teams', headers: { 'x-admin-key': adminKey }, payload: { name: '' } })
      assert.deepEqual([response.statusCode, response.json()], [400, { message: 'body/name: must NOT have fewer than 1 characters' }])
    })

    it('refuses everyone when ADMIN_API_KEY is unset', async () => {
      const noAdmin = await startControlPlane({ ADMIN_API_KEY: '' })
      try {
        const response = await noAdmin.app.inject({ method: 'POST', url: '/api/teams', headers: { 'x-admin-key': adminKey }, payload: { name: 'x' } })
        assert.deepEqual([response.statusCode, response.json()], [401, { message: 'Invalid admin key unauthorized' }])
      } finally {
        await noAdmin.close()
      }
    })
  })

  describe('projects', () => {
    it('creates a project in the caller’s team (201) and lists only the team’s projects', async () => {
      const created = await asTeam('POST', '/api/projects', { name: 'Chatbot', description: 'prod' })
      assert.equal(created.statusCode, 201)
      const project = created.json()
      assert.deepEqual(Object.keys(project), ['id', 'name', 'description', 'teamId', 'createdAt', 'updatedAt'])
      assert.deepEqual([project.name, project.description, project.teamId], ['Chatbot', 'prod', ws.teamId])
      const listed = await asTeam('GET', '/api/projects')
      assert.deepEqual(listed.json().projects.map((p: { id: string }) => p.id), [ws.projectId, project.id])
      assert.deepEqual((await listTeamProjects(cp.db, ws.teamId)).map((p) => p.id), [ws.projectId, project.id])
      const one = await asTeam('GET', `/api/projects/${project.id}`)
      assert.deepEqual(one.json(), project)
      const foreign = await asTeam('GET', `/api/projects/${other.projectId}`)
      assert.deepEqual([foreign.statusCode, foreign.json()], [404, { message: 'Project not found' }])
      const noDescription = await asTeam('POST', '/api/projects', { name: 'Bare' })
      assert.equal(noDescription.json().description, '')
    })

    it('answers 403 naming the permission for project keys and 400 for a bad body', async () => {
      for (const [response, permission] of [
        [await asTeam('GET', '/api/projects', undefined, ws.projectKey), 'projects:read'],
        [await asTeam('POST', '/api/projects', { name: 'x' }, ws.projectKey), 'projects:create'],
      ] as const) {
        assert.deepEqual([response.statusCode, response.json()], [403, { message: `Not allowed: this needs the permission ${permission} (docs/permissions.md)` }])
      }
      const bad = await asTeam('POST', '/api/projects', { name: 42 })
      assert.deepEqual([bad.statusCode, bad.json()], [400, { message: 'body/name: must be string' }])
      const badJson = await cp.app.inject({ method: 'POST', url: '/api/projects', headers: { 'x-api-key': ws.teamKey, 'content-type': 'application/json' }, payload: '{"name":' })
      assert.equal(badJson.statusCode, 400)
    })
  })

  describe('retention policy', () => {
    const url = () => `/api/projects/${ws.projectId}/retention`
    // No janitor has started on this database: nothing is known of the cleanup.
    const noCleanupYet = { endpoint: null, schedule: null, nextRunAt: null, lastRun: null }

    it('reads as disabled with 30 days when nothing is stored', async () => {
      const response = await asTeam('GET', url())
      assert.deepEqual([response.statusCode, response.json()], [200, { projectId: ws.projectId, enabled: false, retentionDays: 30, lastRunAt: null, lastDeletedSpans: null, cleanup: noCleanupYet }])
    })

    it('stores an update and reads it back', async () => {
      const updated = await asTeam('PUT', url(), { enabled: true, retentionDays: 7 })
      assert.deepEqual([updated.statusCode, updated.json()], [200, { projectId: ws.projectId, enabled: true, retentionDays: 7, lastRunAt: null, lastDeletedSpans: null, cleanup: noCleanupYet }])
      assert.deepEqual((await asTeam('GET', url())).json(), updated.json())
      assert.equal((await getRetentionPolicy(cp.db, ws.projectId)).retentionDays, 7)
      const bounds = [await asTeam('PUT', url(), { enabled: false, retentionDays: 1 }), await asTeam('PUT', url(), { enabled: true, retentionDays: 3650 })]
      assert.deepEqual(bounds.map((response) => response.json().retentionDays), [1, 3650])
    })

    it('says how the cleanup runs, as the process serving it recorded it: its endpoint, schedule, next run and last run', async () => {
      await saveCleanupStatus(cp.db, { endpointOpen: true, schedule: '0 3 * * *', nextRunAt: new Date('2030-01-02T03:00:00Z') })
      await recordCleanupRun(cp.db, { startedAt: new Date('2030-01-01T03:00:00Z'), finishedAt: new Date('2030-01-01T03:00:02Z'), trigger: 'request', outcome: 'incomplete', deletedSpans: 5, droppedPartitions: 0 })
      await recordCleanupRun(cp.db, { startedAt: new Date('2030-01-01T03:00:05Z'), finishedAt: new Date('2030-01-01T03:00:07Z'), trigger: 'schedule', outcome: 'complete', deletedSpans: 12, droppedPartitions: 2 })
      const response = await asTeam('GET', url())
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json().cleanup, {
        endpoint: 'open',
        schedule: '0 3 * * *',
        nextRunAt: '2030-01-02T03:00:00.000Z',
        lastRun: { startedAt: '2030-01-01T03:00:05.000Z', finishedAt: '2030-01-01T03:00:07.000Z', trigger: 'schedule', outcome: 'complete', deletedSpans: 12, droppedPartitions: 2 },
      })
      // A janitor started with CRON_API_KEY and no schedule of its own (a CronJob calls it).
      await saveCleanupStatus(cp.db, { endpointOpen: false, schedule: null, nextRunAt: null })
      const put = await asTeam('PUT', url(), { enabled: true, retentionDays: 3650 })
      assert.deepEqual({ ...put.json().cleanup, lastRun: null }, { endpoint: 'cron-api-key', schedule: null, nextRunAt: null, lastRun: null })
      await cp.db.deleteFrom('retention_runs').execute()
      await cp.db.deleteFrom('retention_cleanup_status').execute()
    })

    it('validates: integer days 1–3650 and a boolean switch, both required, no coercion', async () => {
      const cases: [object, string][] = [
        [{ enabled: true, retentionDays: 0 }, 'body/retentionDays: must be >= 1'],
        [{ enabled: true, retentionDays: 3651 }, 'body/retentionDays: must be <= 3650'],
        [{ enabled: true, retentionDays: 1.5 }, 'body/retentionDays: must be integer'],
        [{ enabled: true, retentionDays: '30' }, 'body/retentionDays: must be integer'],
        [{ enabled: 'yes', retentionDays: 30 }, 'body/enabled: must be boolean'],
        [{ enabled: null, retentionDays: 30 }, 'body/enabled: must be boolean'],
        [{ retentionDays: 30 }, "body: must have required property 'enabled'"],
        [{ enabled: true }, "body: must have required property 'retentionDays'"],
      ]
      for (const [payload, message] of cases) {
        const response = await asTeam('PUT', url(), payload)
        assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
      }
      assert.equal((await getRetentionPolicy(cp.db, ws.projectId)).retentionDays, 3650)
    })

    it('hides another team’s project (404) and refuses project keys a change (403)', async () => {
      for (const response of [
        await asTeam('GET', `/api/projects/${other.projectId}/retention`),
        await asTeam('PUT', `/api/projects/${other.projectId}/retention`, { enabled: true, retentionDays: 1 }),
        await asTeam('GET', '/api/projects/unknown/retention'),
      ]) {
        assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Project not found' }])
      }
      assert.equal((await getRetentionPolicy(cp.db, other.projectId)).enabled, false)
      const wrongKind = await asTeam('PUT', url(), { enabled: true, retentionDays: 1 }, ws.projectKey)
      assert.deepEqual([wrongKind.statusCode, wrongKind.json()], [403, { message: 'Not allowed: this needs the permission settings:write (docs/permissions.md)' }])
    })
  })
})
