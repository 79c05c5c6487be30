import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { hashApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { findApiKeyIdentityByHash } from '@tracewell/db'
import { buildApp } from '../src/index.ts'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

describe('project and team API keys', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  const createKey = (query: string, key?: string, headers: Record<string, string> = {}) =>
    cp.app.inject({ method: 'POST', url: `/api/api-key?${query}`, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } })

  it('creates a project key that works at once, with content-type json and no body, as clients send it', async () => {
    const response = await createKey(`project_id=${ws.projectId}`, ws.teamKey, { 'content-type': 'application/json' })
    assert.equal(response.statusCode, 200)
    const { apiKey } = response.json()
    assert.deepEqual(Object.keys(response.json()), ['apiKey'])
    assert.match(apiKey, /^tw_proj_[A-Za-z0-9_-]{43}$/)
    assert.equal(response.headers['cache-control'], 'no-store')
    const stored = await findApiKeyIdentityByHash(cp.db, hashApiKey(apiKey))
    assert.deepEqual(stored && { ...stored, id: undefined }, {
      id: undefined,
      kind: 'project',
      teamId: ws.teamId,
      projectId: ws.projectId,
      revoked: false,
      scopes: ['ingest', 'read', 'write'],
      createdByUserId: null,
      expiresAt: null,
    })
    const use = await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': apiKey } })
    assert.equal(use.statusCode, 200)
  })

  it('keeps several live keys per project: creating one never invalidates the others', async () => {
    const first = (await createKey(`project_id=${ws.projectId}`, ws.teamKey)).json().apiKey
    const second = (await createKey(`project_id=${ws.projectId}`, ws.teamKey)).json().apiKey
    assert.notEqual(first, second)
    for (const key of [ws.projectKey, first, second]) {
      assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': key } })).statusCode, 200)
    }
  })

  it('creates a team key for the caller’s own team with ?team_id=', async () => {
    const response = await createKey(`team_id=${ws.teamId}`, ws.teamKey)
    assert.equal(response.statusCode, 200)
    const { apiKey } = response.json()
    assert.match(apiKey, /^tw_team_/)
    assert.equal((await cp.app.inject({ url: '/api/projects', headers: { 'x-api-key': apiKey } })).json().projects[0].id, ws.projectId)
  })

  it('answers 401 for a missing or unknown key, 403 naming the permission for a project key', async () => {
    for (const key of [undefined, '', 'tw_team_unknown-key-0000000000000000000000000']) {
      const response = await createKey(`project_id=${ws.projectId}`, key)
      assert.equal(response.statusCode, 401, `key ${key}`)
      assert.deepEqual(response.json(), unauthorized)
    }
    const projectKey = await createKey(`project_id=${ws.projectId}`, ws.projectKey)
    assert.equal(projectKey.statusCode, 403)
    assert.deepEqual(projectKey.json(), { message: 'Not allowed: this needs the permission keys:manage (docs/permissions.md)' })
  })

  it('takes the key from Authorization: Bearer when no x-api-key is sent', async () => {
    const response = await createKey(`project_id=${ws.projectId}`, undefined, { authorization: `Bearer ${ws.teamKey}` })
    assert.equal(response.statusCode, 200)
    const prompts = await cp.app.inject({ url: '/api/promptsets', headers: { authorization: `Bearer ${response.json().apiKey}` } })
    assert.equal(prompts.statusCode, 200)
    const overridden = await createKey(`project_id=${ws.projectId}`, ws.projectKey, { authorization: `Bearer ${ws.teamKey}` })
    assert.equal(overridden.statusCode, 403, 'x-api-key is judged alone when sent')
  })

  it('answers 401 before looking at the query', async () => {
    const response = await createKey('', 'tw_team_unknown-key-0000000000000000000000000')
    assert.equal(response.statusCode, 401)
    assert.deepEqual(response.json(), unauthorized)
  })

  it('answers 404 for an unknown project and for another team’s project, as if it did not exist', async () => {
    for (const projectId of ['no-such-project', other.projectId]) {
      const response = await createKey(`project_id=${projectId}`, ws.teamKey)
      assert.equal(response.statusCode, 404)
      assert.deepEqual(response.json(), { message: 'Project not found' })
    }
  })

  it('answers 404 for another team’s team_id', async () => {
    const response = await createKey(`team_id=${other.teamId}`, ws.teamKey)
    assert.equal(response.statusCode, 404)
    assert.deepEqual(response.json(), { message: 'Team not found' })
  })

  it('answers 400 when project_id is missing or both are given, 404 for an id no project can have', async () => {
    const missing = await createKey('', ws.teamKey)
    assert.equal(missing.statusCode, 400)
    assert.deepEqual(missing.json(), { message: 'querystring/project_id: required with a team key or a signed-in session' })
    const malformed = await createKey('project_id=not%20an%20id', ws.teamKey)
    // The project is judged (authorize) before the query's schema: an id no project has is not found.
    assert.deepEqual([malformed.statusCode, malformed.json()], [404, { message: 'Project not found' }])
    const both = await createKey(`project_id=${ws.projectId}&team_id=${ws.teamId}`, ws.teamKey)
    assert.equal(both.statusCode, 400)
    assert.deepEqual(both.json(), { message: 'querystring: pass either project_id or team_id, not both' })
  })

  it('lists keys without secrets or hashes, only for the team’s own projects', async () => {
    const created = (await createKey(`project_id=${ws.projectId}`, ws.teamKey)).json().apiKey as string
    const response = await cp.app.inject({ url: `/api/api-keys?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.equal(response.statusCode, 200)
    const { apiKeys } = response.json()
    assert.ok(apiKeys.length >= 2)
    for (const key of apiKeys) {
      assert.deepEqual(Object.keys(key).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'kind', 'lastUsedAt', 'prefix', 'revokedAt', 'scopes'])
      assert.equal(key.kind, 'project')
      assert.ok(key.prefix.length <= 12)
    }
    assert.ok(apiKeys.some((key: { prefix: string }) => created.startsWith(key.prefix)))
    for (const secret of [created, ws.projectKey, hashApiKey(created), created.slice(0, 20)]) assert.ok(!response.body.includes(secret))

    const teamKeys = await cp.app.inject({ url: `/api/api-keys?team_id=${ws.teamId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.ok(teamKeys.json().apiKeys.every((key: { kind: string }) => key.kind === 'team'))
    assert.ok(!teamKeys.body.includes(ws.teamKey))

    const foreign = await cp.app.inject({ url: `/api/api-keys?project_id=${other.projectId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.equal(foreign.statusCode, 404)
    assert.deepEqual(foreign.json(), { message: 'Project not found' })
    const wrongKind = await cp.app.inject({ url: `/api/api-keys?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.projectKey } })
    assert.equal(wrongKind.statusCode, 403)
  })

  it('refuses to revoke another team’s key (404) and answers 204 for its own', async () => {
    const victim = (await createKey(`project_id=${other.projectId}`, other.teamKey)).json().apiKey as string
    const victimId = (await findApiKeyIdentityByHash(cp.db, hashApiKey(victim)))?.id
    const foreign = await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${victimId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.equal(foreign.statusCode, 404)
    assert.deepEqual(foreign.json(), { message: 'API key not found' })
    assert.equal((await findApiKeyIdentityByHash(cp.db, hashApiKey(victim)))?.revoked, false)
    const unknown = await cp.app.inject({ method: 'DELETE', url: '/api/api-keys/00000000-0000-0000-0000-000000000000', headers: { 'x-api-key': ws.teamKey } })
    assert.equal(unknown.statusCode, 404)
  })

  it('refuses a revoked key at once in the revoking instance, and lists it as revoked', async () => {
    const secret = (await createKey(`project_id=${ws.projectId}`, ws.teamKey)).json().apiKey as string
    // Used once, so the verifier has it cached as valid: revocation has to beat the cache.
    assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': secret } })).statusCode, 200)
    const id = (await findApiKeyIdentityByHash(cp.db, hashApiKey(secret)))?.id as string

    const revoked = await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: { 'x-api-key': ws.teamKey } })
    assert.equal(revoked.statusCode, 204)
    assert.equal(revoked.body, '')
    const refused = await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': secret } })
    assert.equal(refused.statusCode, 401)
    assert.deepEqual(refused.json(), unauthorized)

    // A revoked team key cannot create keys any more.
    const teamSecret = (await createKey(`team_id=${ws.teamId}`, ws.teamKey)).json().apiKey as string
    const teamKeyId = (await findApiKeyIdentityByHash(cp.db, hashApiKey(teamSecret)))?.id as string
    assert.equal((await createKey(`project_id=${ws.projectId}`, teamSecret)).statusCode, 200)
    assert.equal((await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${teamKeyId}`, headers: { 'x-api-key': ws.teamKey } })).statusCode, 204)
    const again = await createKey(`project_id=${ws.projectId}`, teamSecret)
    assert.deepEqual([again.statusCode, again.json()], [401, unauthorized])

    const listed = (await cp.app.inject({ url: `/api/api-keys?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })).json()
    const entry = listed.apiKeys.find((key: { id: string }) => key.id === id)
    assert.match(entry.revokedAt, /^\d{4}-\d{2}-\d{2}T/)
    // Revoking twice is still a 204; the project's other keys keep working.
    assert.equal((await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: { 'x-api-key': ws.teamKey } })).statusCode, 204)
    assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': ws.projectKey } })).statusCode, 200)
  })

  it('refuses a key revoked through another instance within 5 seconds', async () => {
    const otherInstance = await buildApp(loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: cp.url, LOG_LEVEL: 'silent' }), { db: cp.db })
    try {
      const secret = (await createKey(`project_id=${ws.projectId}`, ws.teamKey)).json().apiKey as string
      assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': secret } })).statusCode, 200)
      const id = (await findApiKeyIdentityByHash(cp.db, hashApiKey(secret)))?.id as string

      const revokeSentAt = Date.now()
      const revoked = await otherInstance.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: { 'x-api-key': ws.teamKey } })
      assert.equal(revoked.statusCode, 204)
      let refusedAfterMs = Number.POSITIVE_INFINITY
      while (Date.now() - revokeSentAt < 7_000) {
        const response = await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': secret } })
        if (response.statusCode === 401) {
          assert.deepEqual(response.json(), unauthorized)
          refusedAfterMs = Date.now() - revokeSentAt
          break
        }
        await sleep(50)
      }
      // 5 s plus this loop's own polling step and request time.
      assert.ok(refusedAfterMs <= 5_000 + 250, `refused ${refusedAfterMs} ms after the revocation was sent`)
    } finally {
      await otherInstance.close()
    }
  })
})
