import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { hashApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { countTeams, findApiKeyIdentityByHash, findProjectById, findTeamByName, listApiKeys, listTeamProjects, revokeApiKey } from '@tracewell/db'
import { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { Logger } from '@tracewell/logger'
import { bootstrapFromSettings, buildApp, ensureDefaultWorkspace } from '../src/index.ts'

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} }
// Keys carried over from Langtrace are 64 hex characters.
const langtraceKey = () => randomBytes(32).toString('hex')

describe('headless bootstrap from INIT_*', () => {
  let database: TestDatabase
  before(async () => {
    database = await createTestDatabase()
  })
  after(() => database.drop())

  it('does nothing without INIT_* settings', async () => {
    assert.equal(await bootstrapFromSettings(database.db, {}, quiet), null)
    assert.equal(await countTeams(database.db), 0)
  })

  it('creates the team, project and verbatim keys once, and nothing on later starts', async () => {
    const settings = {
      INIT_TEAM_NAME: 'Carried over',
      INIT_TEAM_API_KEY: langtraceKey(),
      INIT_PROJECT_NAME: 'Legacy app',
      INIT_PROJECT_ID: 'clx0legacy0project0id',
      INIT_PROJECT_API_KEY: langtraceKey(),
    }
    const first = await bootstrapFromSettings(database.db, settings, quiet)
    assert.deepEqual(first?.created, ['team', 'project', 'team key', 'project key'])
    const team = await findTeamByName(database.db, 'Carried over')
    assert.equal(first?.teamId, team?.id)
    const project = await findProjectById(database.db, 'clx0legacy0project0id')
    assert.deepEqual([project?.name, project?.teamId], ['Legacy app', team?.id])
    assert.deepEqual({ ...(await findApiKeyIdentityByHash(database.db, hashApiKey(settings.INIT_PROJECT_API_KEY))), id: 'x' }, {
      id: 'x', kind: 'project', teamId: team?.id, projectId: 'clx0legacy0project0id', revoked: false, scopes: null, createdByUserId: null, expiresAt: null,
    })
    assert.equal((await findApiKeyIdentityByHash(database.db, hashApiKey(settings.INIT_TEAM_API_KEY)))?.kind, 'team')

    // Every start runs it again, replicas at the same time: nothing more is created.
    const again = await Promise.all([1, 2, 3].map(() => bootstrapFromSettings(database.db, settings, quiet)))
    assert.deepEqual(again.map((result) => result?.created), [[], [], []])
    assert.equal(await countTeams(database.db), 1)
    assert.equal((await listTeamProjects(database.db, team?.id as string)).length, 1)
    assert.equal((await listApiKeys(database.db, { teamId: team?.id as string, projectId: 'clx0legacy0project0id' })).length, 1)
    assert.equal((await listApiKeys(database.db, { teamId: team?.id as string, projectId: null })).length, 1)
  })

  it('finds a project by name in the team when no id is given, and adds a new key to it', async () => {
    const key = langtraceKey()
    const result = await bootstrapFromSettings(database.db, { INIT_TEAM_NAME: 'Carried over', INIT_PROJECT_NAME: 'Legacy app', INIT_PROJECT_API_KEY: key }, quiet)
    assert.deepEqual([result?.projectId, result?.created], ['clx0legacy0project0id', ['project key']])
  })

  it('never brings a revoked key back, and warns', async () => {
    const key = langtraceKey()
    const settings = { INIT_TEAM_NAME: 'Revoker', INIT_TEAM_API_KEY: key }
    const result = await bootstrapFromSettings(database.db, settings, quiet)
    const identity = await findApiKeyIdentityByHash(database.db, hashApiKey(key))
    await revokeApiKey(database.db, result?.teamId as string, identity?.id as string)
    const warnings: string[] = []
    await bootstrapFromSettings(database.db, settings, { info: () => {}, warn: (_details, message) => warnings.push(message), error: () => {} })
    assert.equal((await findApiKeyIdentityByHash(database.db, hashApiKey(key)))?.revoked, true)
    assert.deepEqual(warnings, ['bootstrap: INIT_TEAM_API_KEY was revoked; it stays revoked'])
  })

  it('runs at every start of the service, and the given keys authenticate', async () => {
    const fresh = await createTestDatabase()
    const teamKey = langtraceKey()
    const projectKey = langtraceKey()
    const config = loadConfig(ControlPlaneConfigSchema, {
      DATABASE_URL: fresh.url, LOG_LEVEL: 'silent', INIT_TEAM_NAME: 'Ops', INIT_TEAM_API_KEY: teamKey, INIT_PROJECT_ID: 'ops-project', INIT_PROJECT_API_KEY: projectKey,
    })
    try {
      for (let start = 0; start < 2; start++) {
        const app = await buildApp(config, { db: fresh.db })
        const projects = await app.inject({ url: '/api/projects', headers: { 'x-api-key': teamKey } })
        assert.deepEqual(projects.json().projects.map((p: { id: string; name: string }) => [p.id, p.name]), [['ops-project', 'Default project']])
        const promptsets = await app.inject({ url: '/api/promptsets', headers: { 'x-api-key': projectKey } })
        assert.deepEqual([promptsets.statusCode, promptsets.json()], [200, { promptsets: [] }])
        await app.close()
      }
      assert.equal(await countTeams(fresh.db), 1)
    } finally {
      await fresh.drop()
    }
  })

  it('works on the embedded database too', async () => {
    const embedded = await createEmbeddedTestDatabase()
    try {
      const settings = { INIT_TEAM_NAME: 'Embedded', INIT_PROJECT_NAME: 'Local', INIT_PROJECT_API_KEY: langtraceKey() }
      assert.deepEqual((await bootstrapFromSettings(embedded.db, settings, quiet))?.created, ['team', 'project', 'project key'])
      assert.deepEqual((await bootstrapFromSettings(embedded.db, settings, quiet))?.created, [])
    } finally {
      await embedded.drop()
    }
  })
})

describe('default workspace of a first start', () => {
  it('creates a team, a project and one key each only when there is no team, and returns the secrets', async () => {
    const fresh = await createTestDatabase()
    try {
      const workspace = await ensureDefaultWorkspace(fresh.db)
      assert.ok(workspace)
      assert.deepEqual([workspace.teamName, workspace.projectName], ['Default team', 'Default project'])
      assert.match(workspace.teamApiKey, /^tw_team_/)
      assert.match(workspace.projectApiKey, /^tw_proj_/)
      assert.deepEqual({ ...(await findApiKeyIdentityByHash(fresh.db, hashApiKey(workspace.projectApiKey))), id: 'x' }, {
        id: 'x', kind: 'project', teamId: workspace.teamId, projectId: workspace.projectId, revoked: false, scopes: null, createdByUserId: null, expiresAt: null,
      })
      assert.equal(await ensureDefaultWorkspace(fresh.db), null)
      assert.equal(await countTeams(fresh.db), 1)
    } finally {
      await fresh.drop()
    }
  })
})
