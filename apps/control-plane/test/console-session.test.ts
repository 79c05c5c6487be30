import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sign } from '@fastify/cookie'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { revokeApiKey, sql } from '@tracewell/db'
import type { LightMyRequestResponse } from 'fastify'
import { encodeSessionClaims } from '../src/console/session-claims.ts'
import { buildApp } from '../src/index.ts'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

const secret = 'session-secret-for-tests-0123456789abcdef'
const csrf = { 'x-tracewell-csrf': '1' }
const csrfMessage = "Missing header x-tracewell-csrf: 1; requests that change data with the console's session cookie must send it"
const twelveHours = 12 * 60 * 60

/** The session cookie a response set, as the browser would send it back. */
function sessionCookie(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((candidate) => candidate.name === 'tw_session')
  assert.ok(cookie, `a tw_session cookie is set (status ${response.statusCode})`)
  return `tw_session=${cookie.value}`
}

function setCookieHeader(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie']
  assert.equal(typeof header, 'string', 'exactly one Set-Cookie header')
  return header as string
}

describe('console sessions', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let address = 0
  // Every test signs in from an address of its own, so the failed-sign-in limit of one test does
  // not reach into another.
  const nextAddress = () => `10.0.0.${++address}`

  const signIn = (apiKey: string, remoteAddress = nextAddress(), headers: Record<string, string> = csrf) =>
    cp.app.inject({ method: 'POST', url: '/api/session', headers: { ...headers, 'content-type': 'application/json' }, payload: { apiKey }, remoteAddress })

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: secret, KEY_CACHE_TTL_MS: '400' })
    ws = await seedWorkspace(cp.db, 'Acme')
  })
  after(() => cp.close())

  it('signs in with a team key: a signed HttpOnly SameSite=Strict cookie that holds no key', async () => {
    const response = await signIn(ws.teamKey)
    assert.equal(response.statusCode, 200)
    const body = response.json()
    assert.deepEqual({ ...body, expiresAt: 'e' }, { teamId: ws.teamId, teamName: 'Acme', expiresAt: 'e' })
    const expiresIn = (Date.parse(body.expiresAt) - Date.now()) / 1000
    assert.ok(expiresIn > twelveHours - 60 && expiresIn <= twelveHours, `expires in 12 hours, not ${expiresIn} s`)
    assert.equal(response.headers['cache-control'], 'no-store')

    const header = setCookieHeader(response)
    assert.match(header, /^tw_session=[A-Za-z0-9_-]+\.[A-Za-z0-9+/]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/)
    assert.ok(!header.includes(ws.teamKey) && !header.includes(ws.teamKey.slice(8, 20)), 'the key is not in the cookie')
    const claims = JSON.parse(Buffer.from(header.slice('tw_session='.length).split('.')[0] as string, 'base64url').toString())
    assert.deepEqual(claims.slice(0, 2), [ws.teamId, claims[1]])
    assert.deepEqual(Object.keys(claims), ['0', '1', '2', '3'], 'team id, key id, expiry and a random session id only')
    assert.match(claims[3], /^[A-Za-z0-9_-]{24}$/)
  })

  it('marks the cookie Secure when the request came over HTTPS through a proxy', async () => {
    const response = await signIn(ws.teamKey, nextAddress(), { ...csrf, 'x-forwarded-proto': 'https' })
    assert.equal(response.statusCode, 200)
    assert.match(setCookieHeader(response), /; HttpOnly; Secure; SameSite=Strict$/)
  })

  it('says who is signed in, and 401 without a session', async () => {
    const cookie = sessionCookie(await signIn(ws.teamKey))
    const me = await cp.app.inject({ url: '/api/session', headers: { cookie } })
    assert.equal(me.statusCode, 200)
    assert.deepEqual({ ...me.json<Record<string, unknown>>(), expiresAt: 'e' }, { teamId: ws.teamId, teamName: 'Acme', expiresAt: 'e' })
    const nobody = await cp.app.inject({ url: '/api/session' })
    assert.deepEqual([nobody.statusCode, nobody.json()], [401, { message: 'Not signed in' }])
  })

  it('refuses a wrong key, and a project key, with a message that says what to use', async () => {
    const wrong = await signIn('tw_team_not-a-key-at-all')
    assert.deepEqual([wrong.statusCode, wrong.json()], [401, { message: 'That is not a live team API key. Sign in with a team key (it starts with tw_team_).' }])
    assert.equal(wrong.headers['set-cookie'], undefined)
    const project = await signIn(ws.projectKey)
    assert.deepEqual([project.statusCode, project.json()], [401, { message: 'That is a project key, which sends traces. The console needs a team key (it starts with tw_team_).' }])
    const empty = await signIn('')
    assert.deepEqual([empty.statusCode, empty.json()], [400, { message: 'body/apiKey: must NOT have fewer than 1 characters' }])
  })

  it('requires the CSRF header to sign in and out', async () => {
    const response = await signIn(ws.teamKey, nextAddress(), {})
    assert.deepEqual([response.statusCode, response.json()], [403, { message: csrfMessage }])
    assert.equal(response.headers['set-cookie'], undefined)
    const signOut = await cp.app.inject({ method: 'DELETE', url: '/api/session' })
    assert.deepEqual([signOut.statusCode, signOut.json()], [403, { message: csrfMessage }])
  })

  it('signs out by clearing the cookie', async () => {
    const response = await cp.app.inject({ method: 'DELETE', url: '/api/session', headers: csrf })
    assert.equal(response.statusCode, 204)
    assert.match(setCookieHeader(response), /^tw_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/)
  })

  it('ends the session on the server: the old cookie no longer works, here or on another replica', async () => {
    const cookie = sessionCookie(await signIn(ws.teamKey))
    const other = sessionCookie(await signIn(ws.teamKey))
    // A second replica: the same database and secret, its own caches, which saw the session live.
    const replica = await buildApp(loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: cp.url, LOG_LEVEL: 'silent', SESSION_SECRET: secret, KEY_CACHE_TTL_MS: '0' }), { db: cp.db })
    try {
      assert.equal((await replica.inject({ url: '/api/session', headers: { cookie } })).statusCode, 200)
      const signOut = await cp.app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie, ...csrf } })
      assert.equal(signOut.statusCode, 204)
      for (const app of [cp.app, replica]) {
        const session = await app.inject({ url: '/api/session', headers: { cookie } })
        assert.deepEqual([session.statusCode, session.json()], [401, { message: 'Not signed in' }])
        const projects = await app.inject({ url: '/api/projects', headers: { cookie } })
        assert.deepEqual([projects.statusCode, projects.json()], [401, unauthorized])
      }
      assert.equal((await cp.app.inject({ url: '/api/session', headers: { cookie: other } })).statusCode, 200, 'another sign-in of the same key goes on')
    } finally {
      await replica.close()
    }
  })

  it('refuses a cookie whose content or signature was changed, or that has expired', async () => {
    const cookie = sessionCookie(await signIn(ws.teamKey))
    const [value, signature] = cookie.slice('tw_session='.length).split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(value, 'base64url').toString()) as [string, string, number, string]
    const otherTeam = await seedWorkspace(cp.db, 'Other')
    const forgedValue = encodeSessionClaims({ sessionId: claims[3], teamId: otherTeam.teamId, keyId: claims[1], expiresAt: claims[2] })
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`
    const expired = sign(encodeSessionClaims({ sessionId: claims[3], teamId: ws.teamId, keyId: claims[1], expiresAt: Date.now() - 1 }), secret)
    // A cookie of the release before sign-outs were revocable: no session id to revoke.
    const withoutSessionId = sign(Buffer.from(JSON.stringify([ws.teamId, claims[1], claims[2]])).toString('base64url'), secret)
    const wrongSecret = sign(value, 'another-secret-0123456789abcdef0123456789')
    const signedButOtherTeam = sign(forgedValue, secret)
    for (const [what, forged] of [
      ['content changed', `${forgedValue}.${signature}`],
      ['signature changed', `${value}.${flipped}`],
      ['unsigned', value],
      ['expired', expired],
      ['signed with another secret', wrongSecret],
      ['claims a team the key is not of', signedButOtherTeam],
      ['has no session id', withoutSessionId],
    ] as const) {
      const response = await cp.app.inject({ url: '/api/session', headers: { cookie: `tw_session=${forged}` } })
      assert.deepEqual([response.statusCode, response.json()], [401, { message: 'Not signed in' }], what)
      const projects = await cp.app.inject({ url: '/api/projects', headers: { cookie: `tw_session=${forged}` } })
      assert.deepEqual([projects.statusCode, projects.json()], [401, unauthorized], what)
    }
  })

  it('stands in for the team key on team-key routes; changes need the CSRF header', async () => {
    const cookie = sessionCookie(await signIn(ws.teamKey))
    const listed = await cp.app.inject({ url: '/api/projects', headers: { cookie } })
    assert.equal(listed.statusCode, 200)
    assert.deepEqual(listed.json().projects.map((project: { id: string }) => project.id), [ws.projectId])

    const countProjects = async () => (await cp.db.selectFrom('projects').select(sql<string>`count(*)`.as('n')).where('team_id', '=', ws.teamId).executeTakeFirstOrThrow()).n
    const refused = await cp.app.inject({ method: 'POST', url: '/api/projects', headers: { cookie }, payload: { name: 'From the console' } })
    assert.deepEqual([refused.statusCode, refused.json()], [403, { message: csrfMessage }])
    assert.equal(await countProjects(), '1', 'nothing was created')

    const created = await cp.app.inject({ method: 'POST', url: '/api/projects', headers: { cookie, ...csrf }, payload: { name: 'From the console' } })
    assert.equal(created.statusCode, 201)
    assert.equal(created.json().teamId, ws.teamId)
    assert.equal(await countProjects(), '2')
  })

  it('judges an x-api-key header alone, whatever cookie comes with it', async () => {
    const cookie = sessionCookie(await signIn(ws.teamKey))
    const response = await cp.app.inject({ url: '/api/projects', headers: { cookie, 'x-api-key': 'tw_team_wrong' } })
    assert.deepEqual([response.statusCode, response.json()], [401, unauthorized])
    // A key-authenticated request needs no CSRF header: browsers cannot send x-api-key cross-site.
    const project = await cp.app.inject({ method: 'POST', url: '/api/projects', headers: { 'x-api-key': ws.teamKey }, payload: { name: 'by key' } })
    assert.equal(project.statusCode, 201)
  })

  it('ends at once when its key is revoked here, within the key cache TTL when revoked elsewhere', async () => {
    const here = await seedWorkspace(cp.db, 'Revoked here')
    const cookie = sessionCookie(await signIn(here.teamKey))
    const keys = await cp.app.inject({ url: `/api/api-keys?team_id=${here.teamId}`, headers: { cookie } })
    const [teamKey] = keys.json().apiKeys as Array<{ id: string }>
    assert.ok(teamKey)
    const revoke = await cp.app.inject({ method: 'DELETE', url: `/api/api-keys/${teamKey.id}`, headers: { cookie, ...csrf } })
    assert.equal(revoke.statusCode, 204)
    const after = await cp.app.inject({ url: '/api/session', headers: { cookie } })
    assert.deepEqual([after.statusCode, after.json()], [401, { message: 'Not signed in' }])

    const elsewhere = await seedWorkspace(cp.db, 'Revoked elsewhere')
    const other = sessionCookie(await signIn(elsewhere.teamKey))
    assert.equal((await cp.app.inject({ url: '/api/projects', headers: { cookie: other } })).statusCode, 200)
    const otherKeys = await cp.app.inject({ url: `/api/api-keys?team_id=${elsewhere.teamId}`, headers: { cookie: other } })
    const revokedAt = Date.now()
    assert.equal(await revokeApiKey(cp.db, elsewhere.teamId, otherKeys.json().apiKeys[0].id), true)
    for (;;) {
      const response = await cp.app.inject({ url: '/api/projects', headers: { cookie: other } })
      if (response.statusCode === 401) break
      assert.equal(response.statusCode, 200)
      assert.ok(Date.now() - revokedAt < 1_400, 'refused within the 400 ms TTL (and a margin)')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })

  it('slows failed sign-ins and key guesses per address, and never refuses a correct key', async () => {
    const address = nextAddress()
    const timed = async <T>(work: Promise<T>) => {
      const started = performance.now()
      return { response: await work, ms: performance.now() - started }
    }
    for (let i = 0; i < 12; i++) assert.equal((await signIn(ws.teamKey, address)).statusCode, 200, `success ${i + 1}`)
    for (let i = 0; i < 10; i++) {
      const { response, ms } = await timed(signIn('tw_team_guess', address))
      assert.deepEqual([response.statusCode, response.json()], [401, { message: 'That is not a live team API key. Sign in with a team key (it starts with tw_team_).' }])
      assert.ok(ms < 500, `failure ${i + 1} answered at once (${ms} ms)`)
    }
    // Past the free failures the guesses wait their turn, one a second, sign-in and x-api-key alike…
    const guesses = [
      timed(signIn('tw_team_guess', address)),
      timed(cp.app.inject({ url: '/api/projects', headers: { 'x-api-key': 'tw_team_guess-by-header' }, remoteAddress: address })),
    ]
    // …while the correct key is admitted at once, by sign-in and by header (the issue: 429 for 15 minutes).
    const correct = await timed(signIn(ws.teamKey, address))
    assert.equal(correct.response.statusCode, 200)
    assert.ok(correct.ms < 500, `correct key answered after ${correct.ms} ms`)
    const byHeader = await timed(cp.app.inject({ url: '/api/projects', headers: { 'x-api-key': ws.teamKey }, remoteAddress: address }))
    assert.equal(byHeader.response.statusCode, 200)
    assert.ok(byHeader.ms < 500)
    const [first, second] = await Promise.all(guesses)
    assert.equal(first?.response.statusCode, 401)
    assert.equal(second?.response.statusCode, 401)
    // Which of the two reaches the count first is up to the event loop; the later one waits a turn.
    const waited = Math.max(first?.ms ?? 0, second?.ms ?? 0)
    assert.ok(waited >= 900, `the later guess waited its turn (${waited} ms)`)
    const elsewhere = await timed(signIn('tw_team_guess', nextAddress()))
    assert.ok(elsewhere.ms < 500, 'another address is not held back')
  })

  it('stands in for the team key on project routes, with project_id; changes need the CSRF header', async () => {
    const cookie = sessionCookie(await signIn(ws.teamKey))
    const traces = await cp.app.inject({ url: `/api/traces?project_id=${ws.projectId}`, headers: { cookie } })
    assert.deepEqual([traces.statusCode, traces.json()], [200, { traces: [], nextCursor: null }])
    const withoutProject = await cp.app.inject({ url: '/api/traces', headers: { cookie } })
    assert.deepEqual([withoutProject.statusCode, withoutProject.json()], [400, { message: 'querystring/project_id: required with a team key or a signed-in session' }])
    const other = await seedWorkspace(cp.db, 'Someone else')
    const foreign = await cp.app.inject({ url: `/api/traces?project_id=${other.projectId}`, headers: { cookie } })
    assert.deepEqual([foreign.statusCode, foreign.json()], [404, { message: 'Project not found' }])

    const countRegistries = async () => (await cp.db.selectFrom('promptsets').select(sql<string>`count(*)`.as('n')).where('project_id', '=', ws.projectId).executeTakeFirstOrThrow()).n
    const refused = await cp.app.inject({ method: 'POST', url: `/api/promptsets?project_id=${ws.projectId}`, headers: { cookie }, payload: { name: 'greeting' } })
    assert.deepEqual([refused.statusCode, refused.json()], [403, { message: csrfMessage }])
    assert.equal(await countRegistries(), '0')
    const created = await cp.app.inject({ method: 'POST', url: `/api/promptsets?project_id=${ws.projectId}`, headers: { cookie, ...csrf }, payload: { name: 'greeting' } })
    assert.equal(created.statusCode, 201)
    assert.equal(await countRegistries(), '1')
    const promptset = created.json().id as string
    const version = await cp.app.inject({
      method: 'POST', url: `/api/promptsets/${promptset}/prompts?project_id=${ws.projectId}`, headers: { cookie, ...csrf }, payload: { value: 'Hi ${name}', model: 'gpt-4o' },
    })
    assert.equal(version.statusCode, 201)
    // The SDK's lookup, as the console's preview asks for it.
    const preview = await cp.app.inject({ url: `/api/promptset?project_id=${ws.projectId}&promptset_id=${promptset}&version=1&variables.name=Ada`, headers: { cookie } })
    assert.equal(preview.statusCode, 200)
    assert.equal(preview.json().prompts[0].value, 'Hi Ada')
    const previewWithoutProject = await cp.app.inject({ url: `/api/promptset?promptset_id=${promptset}&version=1`, headers: { cookie } })
    assert.deepEqual([previewWithoutProject.statusCode, previewWithoutProject.json()], [400, { message: 'querystring/project_id: required with a team key or a signed-in session' }])
    const teamKeyHeader = await cp.app.inject({ url: `/api/promptset?project_id=${ws.projectId}&promptset_id=${promptset}&version=1`, headers: { cookie, 'x-api-key': ws.teamKey } })
    // A team key reads prompts of its team's projects (prompts:read), as the console's session does.
    assert.equal(teamKeyHeader.statusCode, 200, 'a team key names the project')

    const forged = await cp.app.inject({ url: `/api/traces?project_id=${ws.projectId}`, headers: { cookie: 'tw_session=forged.value' } })
    assert.deepEqual([forged.statusCode, forged.json()], [401, unauthorized])
  })
})

describe('console sessions without SESSION_SECRET', () => {
  let cp: TestControlPlane
  before(async () => (cp = await startControlPlane()))
  after(() => cp.close())

  it('has no session routes, and ignores cookies', async () => {
    const ws = await seedWorkspace(cp.db)
    const response = await cp.app.inject({ method: 'POST', url: '/api/session', headers: { ...csrf, 'content-type': 'application/json' }, payload: { apiKey: ws.teamKey } })
    assert.equal(response.statusCode, 404)
    const projects = await cp.app.inject({ url: '/api/projects', headers: { cookie: 'tw_session=anything' } })
    assert.deepEqual([projects.statusCode, projects.json()], [401, unauthorized])
  })
})
