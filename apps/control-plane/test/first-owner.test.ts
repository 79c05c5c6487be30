import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { verifyPassword } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { anyTeamOwnerExists, findUserCredentialsByEmail, listTeamMembers, membershipsOf } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { buildApp } from '../src/index.ts'
import { offerSetupLink } from '../src/accounts/first-owner.ts'
import { csrf, sessionCookieSet, testPassword } from './people.helper.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane } from './helper.ts'

const sessionSecret = 'session-secret-for-tests-0123456789abcdef'

describe('the setup link', () => {
  let cp: TestControlPlane
  let teamId: string

  before(async () => {
    // An install that upgrades: a team with keys, and nobody with an account.
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret })
    ;({ teamId } = await seedWorkspace(cp.db, 'Old team'))
  })
  after(() => cp?.close())

  const use = (token: string, body: Record<string, unknown>) => cp.app.inject({ method: 'POST', url: `/api/setup/${token}`, headers: csrf, payload: body })

  it('is offered while no team has an owner, the same one again while unused', async () => {
    const token = await offerSetupLink(cp.db)
    assert.match(token ?? '', /^[A-Za-z0-9_-]{43}$/)
    assert.equal(await offerSetupLink(cp.db, token), token, 'the kept link stays the link')
    assert.notEqual(await offerSetupLink(cp.db, 'x'.repeat(43)), 'x'.repeat(43), 'an unknown kept token is replaced')
    assert.deepEqual((await cp.app.inject({ url: `/api/setup/${token}` })).json(), { teamName: 'Old team' })
  })

  it('makes the owner of the oldest team once, signed in, and then every setup link is spent', async () => {
    const token = (await offerSetupLink(cp.db)) as string
    const another = (await offerSetupLink(cp.db)) as string
    const weak = await use(token, { email: 'first@example.com', name: 'First Owner', password: 'aaaaaaaaaaaaaa' })
    assert.deepEqual([weak.statusCode, weak.json()], [400, { message: 'body/password: must not be one character repeated' }])
    const noCsrf = await cp.app.inject({ method: 'POST', url: `/api/setup/${token}`, payload: { email: 'first@example.com', name: 'First Owner', password: testPassword } })
    assert.equal(noCsrf.statusCode, 403)

    const made = await use(token, { email: 'first@example.com', name: 'First Owner', password: testPassword })
    assert.equal(made.statusCode, 201, made.body)
    assert.equal(made.json().teamId, teamId)
    const cookie = sessionCookieSet(made)
    const members = (await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie } })).json().members
    assert.deepEqual(members.map((member: { email: string; role: string }) => [member.email, member.role]), [['first@example.com', 'owner']])

    for (const spent of [token, another]) {
      const again = await use(spent, { email: 'second@example.com', name: 'Second', password: testPassword })
      assert.deepEqual([again.statusCode, again.json()], [410, { message: 'This Tracewell has its owner already: sign in, or ask an owner for an invitation' }])
    }
    assert.equal(await offerSetupLink(cp.db), null, 'no link once there is an owner')
    const unknown = await cp.app.inject({ url: `/api/setup/${'C'.repeat(43)}` })
    assert.equal(unknown.statusCode, 404)
  })
})

describe('INIT_USER_EMAIL and INIT_USER_PASSWORD', () => {
  it('make the owner of INIT_TEAM_NAME headlessly, once, and leave the password alone after', async () => {
    const database = await createTestDatabase()
    const settings = { DATABASE_URL: database.url, LOG_LEVEL: 'silent', INIT_TEAM_NAME: 'Containers', INIT_USER_EMAIL: 'ops@example.com', INIT_USER_PASSWORD: 'ops password 0123' }
    try {
      const first = await buildApp(loadConfig(ControlPlaneConfigSchema, settings), { db: database.db })
      await first.close()
      const credentials = await findUserCredentialsByEmail(database.db, 'ops@example.com')
      assert.ok(credentials && (await verifyPassword('ops password 0123', credentials.passwordHash ?? '')))
      assert.equal(credentials.emailVerified, true)
      const [membership] = await membershipsOf(database.db, credentials.id)
      assert.deepEqual([membership?.teamName, membership?.role], ['Containers', 'owner'])
      assert.equal(await offerSetupLink(database.db), null)

      // A restart with another password in the settings changes nothing.
      const second = await buildApp(loadConfig(ControlPlaneConfigSchema, { ...settings, INIT_USER_PASSWORD: 'another password 99' }), { db: database.db })
      await second.close()
      assert.equal((await findUserCredentialsByEmail(database.db, 'ops@example.com'))?.passwordHash, credentials.passwordHash)
      assert.equal((await listTeamMembers(database.db, membership?.teamId ?? '')).length, 1)
    } finally {
      await database.drop()
    }
  })

  it('refuse to start with a password below the rule, or with one of the two alone', async () => {
    const database = await createTestDatabase()
    try {
      const base = { DATABASE_URL: database.url, LOG_LEVEL: 'silent', INIT_USER_EMAIL: 'ops@example.com' }
      await assert.rejects(buildApp(loadConfig(ControlPlaneConfigSchema, { ...base, INIT_USER_PASSWORD: 'zzzzzzzzzzzzzzzz' }), { db: database.db }), {
        message: 'INIT_USER_PASSWORD: must not be one character repeated',
      })
      await assert.rejects(buildApp(loadConfig(ControlPlaneConfigSchema, base), { db: database.db }), { message: 'INIT_USER_EMAIL and INIT_USER_PASSWORD: set both, or neither' })
      assert.equal(await anyTeamOwnerExists(database.db), false)
    } finally {
      await database.drop()
    }
  })
})

describe('SIGNUP', () => {
  let open: TestControlPlane
  let invite: TestControlPlane
  before(async () => {
    open = await startControlPlane({ SESSION_SECRET: sessionSecret, SIGNUP: 'open' })
    invite = await startControlPlane({ SESSION_SECRET: sessionSecret })
  })
  after(async () => {
    await open?.close()
    await invite?.close()
  })

  const signUp = (cp: TestControlPlane, body: Record<string, unknown>) => cp.app.inject({ method: 'POST', url: '/api/auth/sign-up', headers: csrf, payload: body })

  it('open: anyone makes an account, signed in and in no team', async () => {
    const made = await signUp(open, { email: 'Walk-In@example.com', name: 'Walk In', password: testPassword })
    assert.equal(made.statusCode, 201, made.body)
    assert.equal(made.json().teamId, null)
    sessionCookieSet(made)
    const user = await findUserCredentialsByEmail(open.db, 'walk-in@example.com')
    assert.deepEqual(await membershipsOf(open.db, user?.id ?? ''), [])
    const twice = await signUp(open, { email: 'walk-in@EXAMPLE.com', name: 'Again', password: testPassword })
    assert.deepEqual([twice.statusCode, twice.json()], [409, { message: 'body/email: an account with walk-in@EXAMPLE.com exists already; sign in (or reset its password) instead' }])
    const weak = await signUp(open, { email: 'weak@example.com', name: 'Weak', password: 'weak' })
    assert.deepEqual([weak.statusCode, weak.json()], [400, { message: 'body/password: must be at least 12 characters long' }])
  })

  it('invite (the default): refused with the reason', async () => {
    const refused = await signUp(invite, { email: 'walk-in@example.com', name: 'Walk In', password: testPassword })
    assert.deepEqual([refused.statusCode, refused.json()], [403, { message: 'Sign-up is by invitation on this server (SIGNUP=invite): ask an admin of your team to invite you' }])
    assert.equal(await findUserCredentialsByEmail(invite.db, 'walk-in@example.com'), undefined)
  })
})
