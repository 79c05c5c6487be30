import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { hashApiKey } from '@tracewell/auth'
import { findApiKeyIdentityByHash } from '@tracewell/db'
import { addPerson, csrf, signIn } from './people.helper.ts'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

// Keys that say what they may do, and who made them (issue 44 §4, docs/accounts.md#keys).

describe('API key scopes, expiry and makers', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let adminCookie: string
  let memberCookie: string

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: 'key-scopes-session-secret-0123456789abcdef' })
    ws = await seedWorkspace(cp.db, 'Acme')
    await addPerson(cp.db, ws.teamId, 'admin', 'ada@acme.example')
    await addPerson(cp.db, ws.teamId, 'member', 'max@acme.example')
    adminCookie = await signIn(cp.app, 'ada@acme.example')
    memberCookie = await signIn(cp.app, 'max@acme.example')
  })
  after(() => cp.close())

  const createKey = (query: string, headers: Record<string, string>, payload?: object) =>
    cp.app.inject({ method: 'POST', url: `/api/api-key?${query}`, headers: { ...headers, 'content-type': 'application/json' }, ...(payload ? { payload } : {}) })
  const asAdmin = () => ({ cookie: adminCookie })
  const listKeys = async (query: string) => (await cp.app.inject({ url: `/api/api-keys?${query}`, headers: { 'x-api-key': ws.teamKey } })).json().apiKeys as Record<string, unknown>[]

  it('makes a key with the scopes asked for; it may what they allow and is refused the rest by name', async () => {
    const response = await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey }, { scopes: ['ingest'] })
    assert.equal(response.statusCode, 200, response.body)
    const ingestOnly = response.json().apiKey as string
    const read = await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': ingestOnly } })
    assert.deepEqual([read.statusCode, read.json()], [403, { message: 'Not allowed: this needs the permission prompts:read (docs/permissions.md)' }])
    const feedback = await cp.app.inject({ method: 'POST', url: '/api/evaluation', headers: { 'x-api-key': ingestOnly }, payload: {} })
    assert.notEqual(feedback.statusCode, 403, 'ingest sends feedback')

    const sdkKey = (await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey }, { scopes: ['ingest', 'read'] })).json().apiKey as string
    assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': sdkKey } })).statusCode, 200, 'the Langtrace SDKs read prompts with ingest,read')
    const write = await cp.app.inject({ method: 'POST', url: '/api/promptsets', headers: { 'x-api-key': sdkKey }, payload: { name: 'nope' } })
    assert.deepEqual([write.statusCode, write.json()], [403, { message: 'Not allowed: this needs the permission prompts:write (docs/permissions.md)' }])
  })

  it('lists scopes, the person who made a key, its expiry and last use', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const made = await createKey(`project_id=${ws.projectId}`, { ...asAdmin(), ...csrf }, { scopes: ['read', 'write'], expiresAt })
    assert.equal(made.statusCode, 200, made.body)
    const id = (await findApiKeyIdentityByHash(cp.db, hashApiKey(made.json().apiKey)))?.id
    const listed = (await listKeys(`project_id=${ws.projectId}`)).find((key) => key.id === id)
    assert.ok(listed)
    assert.deepEqual(listed.scopes, ['read', 'write'])
    assert.deepEqual(listed.expiresAt, expiresAt)
    assert.deepEqual((listed.createdBy as { name: string; email: string }).email, 'ada@acme.example')
    assert.equal((listed.createdBy as { name: string }).name, 'ada')
    assert.equal(listed.lastUsedAt, null)
    // Keys of the bootstrap, or made by a key: no person; made before scopes: every right (null).
    const seeded = (await listKeys(`project_id=${ws.projectId}`)).find((key) => key.createdBy === null && key.scopes === null)
    assert.ok(seeded, 'the seeded key shows no maker and null scopes')
  })

  it('refuses an expired key at once, as an unknown one', async () => {
    const made = await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey }, { expiresAt: new Date(Date.now() + 1500).toISOString() })
    const key = made.json().apiKey as string
    assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': key } })).statusCode, 200)
    // Expire it in the store: the verifier's cached entry never outlives the key's expiry.
    await cp.db
      .updateTable('api_keys')
      .set({ expires_at: new Date(Date.now() - 1) })
      .where('key_hash', '=', hashApiKey(key))
      .execute()
    let status = 200
    for (let attempt = 0; attempt < 40 && status === 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      status = (await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': key } })).statusCode
    }
    const refused = await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': key } })
    assert.deepEqual([refused.statusCode, refused.json()], [401, unauthorized])
  })

  it('refuses scopes on a team key, unknown scopes and an expiry in the past, by name', async () => {
    const teamScopes = await createKey(`team_id=${ws.teamId}`, { 'x-api-key': ws.teamKey }, { scopes: ['read'] })
    assert.deepEqual([teamScopes.statusCode, teamScopes.json()], [400, { message: 'body/scopes: only project keys have scopes; a team key acts as an admin of its team' }])
    const unknown = await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey }, { scopes: ['admin'] })
    assert.equal(unknown.statusCode, 400)
    assert.match(unknown.json().message, /^body\/scopes\/0/)
    const past = await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey }, { expiresAt: '2020-01-01T00:00:00Z' })
    assert.deepEqual([past.statusCode, past.json()], [400, { message: 'body/expiresAt: must be in the future' }])
    const garbage = await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey }, { expiresAt: 'tomorrow' })
    assert.deepEqual([garbage.statusCode, garbage.json()], [400, { message: 'body/expiresAt: must be an ISO 8601 date-time' }])
  })

  it('lets an admin manage keys and a member not (403 naming keys:manage); team keys need team-keys:manage', async () => {
    const member = await createKey(`project_id=${ws.projectId}`, { cookie: memberCookie, ...csrf })
    assert.deepEqual([member.statusCode, member.json()], [403, { message: 'Not allowed: this needs the permission keys:manage (docs/permissions.md)' }])
    const memberTeam = await cp.app.inject({ url: `/api/api-keys?team_id=${ws.teamId}`, headers: { cookie: memberCookie } })
    assert.deepEqual([memberTeam.statusCode, memberTeam.json()], [403, { message: 'Not allowed: this needs the permission team-keys:manage (docs/permissions.md)' }])
    const adminTeam = await createKey(`team_id=${ws.teamId}`, { ...asAdmin(), ...csrf })
    assert.equal(adminTeam.statusCode, 200)
    const noCsrf = await createKey(`project_id=${ws.projectId}`, asAdmin())
    assert.equal(noCsrf.statusCode, 403, 'a cookie request that changes data needs the CSRF header')
  })

  it('revokes a project key with project_id (keys:manage), only of that project', async () => {
    const other = await seedWorkspace(cp.db, 'Acme two')
    const key = (await createKey(`project_id=${ws.projectId}`, { 'x-api-key': ws.teamKey })).json().apiKey as string
    const id = (await findApiKeyIdentityByHash(cp.db, hashApiKey(key)))?.id as string
    const wrongProject = await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}?project_id=${other.projectId}`, headers: { 'x-api-key': other.teamKey } })
    assert.equal(wrongProject.statusCode, 404)
    const revoked = await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}?project_id=${ws.projectId}`, headers: { ...asAdmin(), ...csrf } })
    assert.equal(revoked.statusCode, 204)
    assert.equal((await cp.app.inject({ url: '/api/promptsets', headers: { 'x-api-key': key } })).statusCode, 401)
  })
})
