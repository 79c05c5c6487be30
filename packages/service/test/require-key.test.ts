import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { displayPrefix, generateApiKey, hashApiKey, type VerifiedKey } from '@tracewell/auth'
import { createDb, createProject, createTeam, insertApiKey, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { apiKeysPlugin, authPlugin, createApp, installErrorHandler, messageBody, requireKey, UnauthorizedError, type App } from '@tracewell/http'
import { apiKeyStore } from '../src/index.ts'

// requireKey: the one hook every service checks keys with. A key of the route's kind is admitted
// (x-api-key or Bearer) and left at request.apiKey; any other is the API's own 401; a key store
// that cannot be reached is a 503 with Retry-After, never a 401 or a 500.

async function appOn(db: Db, withoutKey?: (request: unknown) => Promise<VerifiedKey | null> | null): Promise<App> {
  const app = createApp({ logger: false })
  installErrorHandler(app, messageBody)
  await app.register(apiKeysPlugin, { store: apiKeyStore(db), ttlMs: 1_000 })
  await app.register(authPlugin)
  app.get('/project', { onRequest: requireKey('project', { unauthorized: 'Invalid API key', ...(withoutKey ? { withoutKey } : {}) }) }, async (request) => ({
    projectId: request.apiKey?.projectId,
  }))
  // What ingest asks of a key: the ingest scope.
  app.get('/ingest', { onRequest: requireKey('project', { unauthorized: 'Invalid API key', permission: 'traces:ingest' }) }, async () => ({ ok: true }))
  await app.ready()
  return app
}

describe('requireKey', () => {
  let database: TestDatabase
  let app: App
  let projectKey: string
  let teamKey: string
  let projectId: string

  before(async () => {
    database = await createTestDatabase()
    const team = await createTeam(database.db, { name: 'auth-test' })
    projectId = (await createProject(database.db, { teamId: team.id, name: 'p' })).id
    projectKey = generateApiKey('project')
    teamKey = generateApiKey('team')
    await insertApiKey(database.db, { kind: 'project', teamId: team.id, projectId, keyHash: hashApiKey(projectKey), prefix: displayPrefix(projectKey) })
    await insertApiKey(database.db, { kind: 'team', teamId: team.id, projectId: null, keyHash: hashApiKey(teamKey), prefix: displayPrefix(teamKey) })
    app = await appOn(database.db)
  })
  after(async () => {
    await app?.close()
    await database?.drop()
  })

  it('admits a key of its kind, as x-api-key or Bearer, and leaves it at request.apiKey', async () => {
    for (const headers of [{ 'x-api-key': projectKey }, { authorization: `Bearer ${projectKey}` }]) {
      const response = await app.inject({ url: '/project', headers })
      assert.equal(response.statusCode, 200, JSON.stringify(headers))
      assert.deepEqual(response.json(), { projectId })
    }
  })

  it('with a permission, admits a project key whose scopes allow it (or made before scopes) and refuses the rest by name', async () => {
    const team = await createTeam(database.db, { name: 'scoped' })
    const project = (await createProject(database.db, { teamId: team.id, name: 'p' })).id
    const keyWith = async (scopes: ('ingest' | 'read' | 'write')[] | null) => {
      const key = generateApiKey('project')
      await insertApiKey(database.db, { kind: 'project', teamId: team.id, projectId: project, keyHash: hashApiKey(key), prefix: displayPrefix(key), scopes })
      return key
    }
    for (const scopes of [['ingest'], ['ingest', 'read'], null] as const) {
      const response = await app.inject({ url: '/ingest', headers: { 'x-api-key': await keyWith(scopes === null ? null : [...scopes]) } })
      assert.equal(response.statusCode, 200, JSON.stringify(scopes))
    }
    const readOnly = await app.inject({ url: '/ingest', headers: { 'x-api-key': await keyWith(['read']) } })
    assert.deepEqual([readOnly.statusCode, readOnly.json()], [403, { message: "Not allowed: this key's scopes (read) do not include what traces:ingest needs (docs/permissions.md)" }])
  })

  it('answers its own 401 for no key, an unknown key and a key of another kind', async () => {
    for (const headers of [{}, { 'x-api-key': generateApiKey('project') }, { 'x-api-key': teamKey }]) {
      const response = await app.inject({ url: '/project', headers })
      assert.equal(response.statusCode, 401, JSON.stringify(headers))
      assert.deepEqual(response.json(), { message: 'Invalid API key' })
    }
  })

  it('asks withoutKey when no key is presented, and answers its rejection', async () => {
    const stand = { id: 'k', kind: 'project', teamId: 't', projectId: 'from-session' } as unknown as VerifiedKey
    const withSession = await appOn(database.db, () => Promise.resolve(stand))
    const refusing = await appOn(database.db, () => Promise.reject(new UnauthorizedError('Session expired')))
    try {
      assert.deepEqual((await withSession.inject({ url: '/project' })).json(), { projectId: 'from-session' })
      const refused = await refusing.inject({ url: '/project' })
      assert.deepEqual([refused.statusCode, refused.json()], [401, { message: 'Session expired' }])
    } finally {
      await Promise.all([withSession.close(), refusing.close()])
    }
  })

  it('answers 503 with Retry-After when the key store cannot be reached', async () => {
    const unreachable = createDb({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 })
    const down = await appOn(unreachable)
    try {
      const response = await down.inject({ url: '/project', headers: { 'x-api-key': projectKey } })
      assert.equal(response.statusCode, 503)
      assert.equal(response.headers['retry-after'], '5')
      assert.deepEqual(response.json(), { message: 'API keys cannot be checked right now; retry after 5 s' })
    } finally {
      await down.close()
      await unreachable.destroy()
    }
  })
})
