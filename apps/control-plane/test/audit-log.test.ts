import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createUser, createUserSession, listAuditEntries, putTeamMember, type Db } from '@tracewell/db'
import { createApp } from '@tracewell/http'
import type { TeamRole } from '@tracewell/policy'
import type { InjectOptions } from 'fastify'
import { installAuditLog } from '../src/audit/audit-log.hook.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// The audit log (docs/accounts.md#audit-log): changes recorded by the one hook from each route's
// permission, the settings' before and after, and GET /api/teams/:teamId/audit-log.

interface Person {
  id: string
  email: string
  cookie: string
}

/** A member of `teamId` with `role`, signed in (a session made as sign-in makes it). */
async function person(db: Db, teamId: string, email: string, role: TeamRole): Promise<Person> {
  const user = await createUser(db, { email, name: email.split('@')[0] ?? email, passwordHash: null, emailVerified: true })
  assert.ok(user)
  await putTeamMember(db, teamId, user.id, role)
  const token = randomBytes(32).toString('base64url')
  await createUserSession(db, { tokenHash: createHash('sha256').update(token).digest('hex'), userId: user.id, expiresAt: new Date(Date.now() + 3_600_000), ip: null, userAgent: null })
  return { id: user.id, email, cookie: `tw_sid=${token}` }
}

describe('audit log', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let admin: Person
  let viewer: Person
  let outsider: Person

  before(async () => {
    // Behind a proxy on this machine: its X-Forwarded-For is the caller's address.
    cp = await startControlPlane({ SESSION_SECRET: 'audit-log-test-secret-0123456789abcdef', TRUST_PROXY: '127.0.0.1' })
    ws = await seedWorkspace(cp.db, 'Audited')
    other = await seedWorkspace(cp.db, 'Other')
    admin = await person(cp.db, ws.teamId, 'ann@example.com', 'admin')
    viewer = await person(cp.db, ws.teamId, 'vic@example.com', 'viewer')
    outsider = await person(cp.db, other.teamId, 'otto@example.com', 'owner')
  })
  after(() => cp.close())

  const asKey = (key: string, method: InjectOptions['method'], url: string, payload?: object) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': key, 'user-agent': 'audit-test' }, ...(payload ? { payload } : {}) })
  const asPerson = (who: Person, method: InjectOptions['method'], url: string, payload?: object) =>
    cp.app.inject({ method, url, headers: { cookie: who.cookie, 'x-tracewell-csrf': '1' }, ...(payload ? { payload } : {}) })
  const log = async (query = '') => {
    const response = await asKey(ws.teamKey, 'GET', `/api/teams/${ws.teamId}/audit-log${query}`)
    assert.equal(response.statusCode, 200, response.body)
    return response.json() as { entries: Record<string, unknown>[]; nextCursor: string | null }
  }
  const latest = async () => (await log('?limit=1')).entries[0]

  it('records a team key setting retention: who, what, where, from which address, before and after', async () => {
    const response = await asKey(ws.teamKey, 'PUT', `/api/projects/${ws.projectId}/retention`, { enabled: true, retentionDays: 7 })
    assert.equal(response.statusCode, 200)
    const entry = await latest()
    assert.ok(entry)
    assert.match(String(entry.createdAt), /^\d{4}-\d{2}-\d{2}T/)
    const actor = entry.actor as { kind: string; id: string; label: string; name: null }
    assert.equal(actor.kind, 'team-key')
    assert.ok(ws.teamKey.startsWith(actor.label), `the key's prefix ${actor.label}`)
    assert.deepEqual(
      { ...entry, id: 'x', createdAt: 'x', actor: 'x' },
      {
        id: 'x', createdAt: 'x', actor: 'x', teamId: ws.teamId, projectId: ws.projectId, action: 'setRetentionPolicy', permission: 'settings:write',
        resourceType: 'settings', resourceId: ws.projectId, method: 'PUT', route: '/api/projects/:projectId/retention', params: { projectId: ws.projectId },
        status: 200, ip: '127.0.0.1', userAgent: 'audit-test',
        // Only what changed: the policy's other fields and the cleanup's status stay out.
        before: { enabled: false, retentionDays: 30 }, after: { enabled: true, retentionDays: 7 },
      },
    )
  })

  it('records a signed-in person’s model prices: made, changed, deleted, each with the item before and after', async () => {
    const url = `/api/projects/${ws.projectId}/model-prices`
    const body = { model: 'house-llm', usdPerMillionTokens: { input: 1, output: 2 } }
    const created = await asPerson(admin, 'POST', url, body)
    assert.equal(created.statusCode, 201, created.body)
    const price = created.json() as { id: string }
    const changed = await asPerson(admin, 'PUT', `${url}/${price.id}`, { ...body, usdPerMillionTokens: { input: 3, output: 4 } })
    assert.equal(changed.statusCode, 200)
    assert.equal((await asPerson(admin, 'DELETE', `${url}/${price.id}`)).statusCode, 204)

    const { entries } = await log(`?actor=${admin.id}`)
    assert.deepEqual(entries.map((entry) => [entry.action, entry.method, entry.resourceId, entry.status]), [
      ['deleteModelPrice', 'DELETE', price.id, 204],
      ['updateModelPrice', 'PUT', price.id, 200],
      ['createModelPrice', 'POST', price.id, 201],
    ])
    assert.deepEqual(entries[0]?.actor, { kind: 'user', id: admin.id, label: 'ann@example.com', name: 'ann' })
    const prices = (entry: Record<string, unknown> | undefined, side: 'before' | 'after') =>
      ((entry?.[side] as { modelPrices: { id: string; usdPerMillionTokens: { input: number } }[] }).modelPrices).map((item) => [item.id, item.usdPerMillionTokens.input])
    assert.deepEqual([prices(entries[2], 'before'), prices(entries[2], 'after')], [[], [[price.id, 1]]])
    assert.deepEqual([prices(entries[1], 'before'), prices(entries[1], 'after')], [[[price.id, 1]], [[price.id, 3]]])
    assert.deepEqual([prices(entries[0], 'before'), prices(entries[0], 'after')], [[[price.id, 3]], []])
  })

  it('records the address a trusted proxy says the change came from', async () => {
    const response = await cp.app.inject({
      method: 'PUT', url: `/api/projects/${ws.projectId}/retention`, headers: { 'x-api-key': ws.teamKey, 'x-forwarded-for': '203.0.113.7' }, payload: { enabled: true, retentionDays: 8 },
    })
    assert.equal(response.statusCode, 200)
    const entry = await latest()
    assert.deepEqual([entry?.ip, entry?.before, entry?.after], ['203.0.113.7', { retentionDays: 7 }, { retentionDays: 8 }])
  })

  it('records no reads, and no change that was refused or failed', async () => {
    const before = (await log()).entries.length
    const url = `/api/projects/${ws.projectId}/retention`
    assert.equal((await asPerson(admin, 'GET', url)).statusCode, 200)
    assert.equal((await asPerson(viewer, 'PUT', url, { enabled: true, retentionDays: 1 })).statusCode, 403)
    assert.equal((await asKey(ws.teamKey, 'PUT', url, { enabled: true, retentionDays: 0 })).statusCode, 400)
    assert.equal((await asKey(other.teamKey, 'PUT', url, { enabled: true, retentionDays: 1 })).statusCode, 404)
    assert.equal((await asPerson(admin, 'DELETE', `/api/projects/${ws.projectId}/model-prices/missing`)).statusCode, 404)
    assert.equal((await log()).entries.length, before)
  })

  it('keeps each team’s entries to itself', async () => {
    assert.equal((await asKey(other.teamKey, 'PUT', `/api/projects/${other.projectId}/retention`, { enabled: true, retentionDays: 9 })).statusCode, 200)
    assert.ok((await log()).entries.every((entry) => entry.teamId === ws.teamId))
    const theirs = await asPerson(outsider, 'GET', `/api/teams/${other.teamId}/audit-log`)
    assert.deepEqual(theirs.json().entries.map((entry: { action: string }) => entry.action), ['setRetentionPolicy'])
  })

  it('filters by actor, action, resource, project and time, and pages with a cursor', async () => {
    assert.deepEqual((await log('?action=setRetentionPolicy')).entries.map((entry) => (entry.actor as { kind: string }).kind), ['team-key', 'team-key'])
    assert.equal((await log('?resource_type=settings')).entries.length, 5)
    assert.equal((await log('?resource_type=prompts')).entries.length, 0)
    assert.equal((await log(`?resource_id=${ws.projectId}`)).entries.length, 2)
    assert.equal((await log(`?project_id=${ws.projectId}`)).entries.length, 5)
    assert.equal((await log(`?from=${new Date(Date.now() + 60_000).toISOString()}`)).entries.length, 0)
    assert.equal((await log(`?to=${new Date(Date.now() + 60_000).toISOString()}`)).entries.length, 5)

    const first = await log('?limit=4')
    assert.equal(first.entries.length, 4)
    assert.ok(first.nextCursor)
    const second = await log(`?limit=4&cursor=${first.nextCursor}`)
    assert.deepEqual(second.entries.map((entry) => entry.action), ['setRetentionPolicy'])
    assert.equal(second.nextCursor, null)
    const ids = [...first.entries, ...second.entries].map((entry) => Number(entry.id))
    assert.deepEqual(ids, [...ids].sort((a, b) => b - a))
  })

  it('is read by admins, owners and team keys only; others are refused with the reason', async () => {
    const url = `/api/teams/${ws.teamId}/audit-log`
    assert.equal((await asPerson(admin, 'GET', url)).statusCode, 200)
    const byViewer = await asPerson(viewer, 'GET', url)
    assert.deepEqual([byViewer.statusCode, byViewer.json().message], [403, 'Not allowed: this needs the permission audit-log:read (docs/permissions.md)'])
    assert.equal((await asKey(ws.projectKey, 'GET', url)).statusCode, 403)
    assert.equal((await asPerson(outsider, 'GET', url)).statusCode, 404)
    assert.equal((await asKey(other.teamKey, 'GET', url)).statusCode, 404)
    assert.equal((await cp.app.inject({ method: 'GET', url })).statusCode, 401)
  })

  it('refuses bad filters with the parameter and the rule', async () => {
    const url = `/api/teams/${ws.teamId}/audit-log`
    const cases: [string, RegExp][] = [
      ['?cursor=abc', /querystring\/cursor: not a nextCursor/],
      ['?from=yesterday', /querystring\/from: expected an ISO 8601 date-time/],
      ['?limit=0', /limit/],
      ['?who=me', /who/],
    ]
    for (const [query, message] of cases) {
      const response = await asPerson(admin, 'GET', `${url}${query}`)
      assert.equal(response.statusCode, 400, query)
      assert.match(response.json().message, message)
    }
  })
})

describe('audit log of a route open to anyone', () => {
  let cp: TestControlPlane
  before(async () => {
    cp = await startControlPlane()
  })
  after(() => cp.close())

  it('records it once its handler names the team and the person, with secret parameters redacted', async () => {
    const ws = await seedWorkspace(cp.db, 'Joined')
    const user = await createUser(cp.db, { email: 'new@example.com', name: 'New', passwordHash: null, emailVerified: true })
    assert.ok(user)
    // A route as accepting an invitation is: open to anyone, recorded because it asks to be.
    const app = createApp({ logger: false })
    app.decorate('db', cp.db)
    app.decorateRequest('principal', null)
    app.decorateRequest('teamId', null)
    app.decorateRequest('controlPlaneProjectId', null)
    installAuditLog(app)
    app.post('/api/invitations/:token/accept', { config: { permission: 'anyone', audit: true }, schema: { operationId: 'acceptInvitation' } }, async (request, reply) => {
      request.teamId = ws.teamId
      request.principal = { kind: 'user', user: { ...user, sessionId: 's', sessionExpiresAt: new Date() } }
      return reply.code(201).send({ id: user.id })
    })
    app.post('/api/auth/sign-out', { config: { permission: 'signed-in' } }, async (_request, reply) => reply.code(204).send())
    await app.ready()
    assert.equal((await app.inject({ method: 'POST', url: '/api/invitations/tok-secret-123/accept' })).statusCode, 201)
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/sign-out' })).statusCode, 204)
    await app.close()

    const { entries } = await listAuditEntries(cp.db, { teamId: ws.teamId, limit: 10 })
    assert.deepEqual(
      entries.map((entry) => [entry.action, entry.permission, entry.resourceType, entry.resourceId, entry.params, entry.actor.label]),
      [['acceptInvitation', 'anyone', 'invitations', user.id, { token: '[redacted]' }, 'new@example.com']],
    )
  })
})
