import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTeam, findUserCredentialsByEmail, teamRoleOf } from '@tracewell/db'
import { startSamlIdp, type SamlAnswerOptions, type SamlTestUser, type TestSamlIdp } from '@tracewell/test-support'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'
import { addPerson, asPerson, withSession } from './people.helper.ts'

// SAML 2.0 single sign-on of one team against an identity provider the test runs (samlify acting
// as one): SP metadata, SP-initiated sign-in, signed assertions, and each way it must fail
// (issue 44 §3).

const publicUrl = 'https://tracewell.acme.test'

describe('SAML sign-in', () => {
  let cp: TestControlPlane
  let idp: TestSamlIdp
  let workspace: Workspace
  let metadata: string

  before(async () => {
    idp = await startSamlIdp()
    cp = await startControlPlane({ SESSION_SECRET: 'a-session-secret-for-the-saml-tests-0123456789', PUBLIC_URL: publicUrl })
    workspace = await seedWorkspace(cp.db, 'Acme')
    const owner = await withSession(addPerson(cp.db, workspace.teamId, 'owner', 'owner@acme.test', { password: false }), cp.db)
    const saved = await cp.app.inject({
      method: 'PUT',
      url: `/api/teams/${workspace.teamId}/sso`,
      headers: asPerson(owner),
      payload: {
        oidc: null,
        saml: { entryPoint: idp.ssoUrl, idpIssuer: idp.entityId, idpCertificate: idp.certificate, displayName: 'Acme ADFS' },
        allowedDomains: ['acme.test'],
        defaultRole: 'member',
        roleClaim: 'groups',
        roleMap: { 'tw-admins': 'admin' },
        passwordSignIn: false,
      },
    })
    assert.equal(saved.statusCode, 200, saved.body)
    metadata = (await cp.app.inject({ method: 'GET', url: `/api/auth/saml/${workspace.teamId}/metadata` })).body
  })
  after(() => cp?.close())

  /** Starts a sign-in at Tracewell, has the IdP answer it, and POSTs the answer to the ACS as a browser would. */
  async function signIn(user: SamlTestUser, options?: SamlAnswerOptions, returnTo = '/traces') {
    const started = await cp.app.inject({ method: 'GET', url: `/api/auth/saml/${workspace.teamId}/login?return_to=${encodeURIComponent(returnTo)}` })
    assert.equal(started.statusCode, 302, started.body)
    const location = started.headers.location as string
    assert.ok(location.startsWith(`${idp.ssoUrl}?SAMLRequest=`), location)
    const form = await idp.answer(location, metadata, user, options)
    const answer = await postToAcs(form)
    return { ...answer, form }
  }

  const postToAcs = (form: { SAMLResponse: string; RelayState: string }) =>
    cp.app.inject({ method: 'POST', url: `/api/auth/saml/${workspace.teamId}/acs`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() })

  const sessionCount = async () => Number((await cp.db.selectFrom('user_sessions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)

  it('serves the service provider’s metadata at a URL: entity id, ACS, signed assertions wanted', () => {
    assert.match(metadata, new RegExp(`entityID="${publicUrl}/api/auth/saml/${workspace.teamId}/metadata"`))
    assert.match(metadata, new RegExp(`Location="${publicUrl}/api/auth/saml/${workspace.teamId}/acs"`))
    assert.match(metadata, /WantAssertionsSigned="true"/)
    assert.match(metadata, /HTTP-POST/)
  })

  it('offers the team’s button on the sign-in page', async () => {
    const response = await cp.app.inject({ method: 'GET', url: '/api/auth/sso/providers' })
    assert.deepEqual(response.json().providers, [{ id: `saml:${workspace.teamId}`, protocol: 'saml', teamId: workspace.teamId, displayName: 'Acme ADFS', loginUrl: `/api/auth/saml/${workspace.teamId}/login` }])
  })

  it('signs a new person in with the role their groups map to, and refuses the same assertion again', async () => {
    const result = await signIn({ email: 'ada@acme.test', name: 'Ada Lovelace', attributes: { groups: ['staff', 'tw-admins'] } })
    assert.equal(result.statusCode, 303, result.body)
    assert.equal(result.headers.location, '/traces')
    const cookie = [result.headers['set-cookie']].flat().find((header) => header?.startsWith('tw_sid='))
    assert.ok(cookie, 'a session cookie')
    assert.match(cookie, /HttpOnly/)
    assert.match(cookie, /SameSite=Lax/)
    const ada = await findUserCredentialsByEmail(cp.db, 'ada@acme.test')
    assert.ok(ada)
    assert.equal(ada.name, 'Ada Lovelace')
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, ada.id), 'admin')

    const before = await sessionCount()
    const replay = await postToAcs(result.form)
    assert.equal(replay.statusCode, 400)
    assert.match(replay.json().message, /already used \(a replayed callback or assertion is refused\)/)
    assert.equal(await sessionCount(), before)
  })

  it('gives the default role without a mapped group', async () => {
    const result = await signIn({ email: 'bob@acme.test' })
    assert.equal(result.statusCode, 303, result.body)
    const bob = await findUserCredentialsByEmail(cp.db, 'bob@acme.test')
    assert.ok(bob)
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, bob.id), 'member')
  })

  for (const [name, options, reason] of [
    ['for another audience', { audience: 'https://someone-else.test/metadata' }, /audience/i],
    ['expired', { expired: true }, /expired|No valid subject confirmation/i],
    ['altered after it was signed', { tamperedEmail: 'root@acme.test' }, /signature/i],
  ] as const) {
    it(`refuses an assertion ${name}`, async () => {
      const before = await sessionCount()
      const result = await signIn({ email: 'carol@acme.test' }, options)
      assert.equal(result.statusCode, 401, result.body)
      assert.match(result.json().message, /^The SAML response was refused: /)
      assert.match(result.json().message, reason)
      assert.equal(await sessionCount(), before)
      assert.equal(await findUserCredentialsByEmail(cp.db, 'carol@acme.test'), undefined)
      assert.equal(await findUserCredentialsByEmail(cp.db, 'root@acme.test'), undefined)
    })
  }

  it('refuses a domain not allowed, and an email the IdP says is unverified', async () => {
    const outsider = await signIn({ email: 'mallory@elsewhere.test' })
    assert.equal(outsider.statusCode, 403)
    assert.match(outsider.json().message, /domain elsewhere\.test do not get an account here/)
    const unverified = await signIn({ email: 'dave@acme.test', attributes: { email_verified: 'false' } })
    assert.equal(unverified.statusCode, 403)
    assert.match(unverified.json().message, /did not say that your email address is verified/)
    assert.equal(await findUserCredentialsByEmail(cp.db, 'dave@acme.test'), undefined)
  })

  it('never signs in an account of another team, whatever email the team’s IdP asserts', async () => {
    const other = await createTeam(cp.db, { name: 'Other' })
    const victim = await withSession(addPerson(cp.db, other.id, 'owner', 'victim@acme.test', { password: false }), cp.db)
    const result = await signIn({ email: 'victim@acme.test' })
    assert.equal(result.statusCode, 403)
    assert.match(result.json().message, /not \(only\) a member of this team/)
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, victim.id), undefined)
  })

  it('refuses an answer to a sign-in it never started (an unsolicited response)', async () => {
    const started = await cp.app.inject({ method: 'GET', url: `/api/auth/saml/${workspace.teamId}/login` })
    const form = await idp.answer(started.headers.location as string, metadata, { email: 'erin@acme.test' })
    await cp.db.deleteFrom('sso_attempts').execute()
    const result = await postToAcs(form)
    assert.equal(result.statusCode, 400)
    assert.equal(await findUserCredentialsByEmail(cp.db, 'erin@acme.test'), undefined)
  })

  it('answers 404 for a team without a SAML identity provider', async () => {
    const bare = await createTeam(cp.db, { name: 'Bare' })
    const response = await cp.app.inject({ method: 'GET', url: `/api/auth/saml/${bare.id}/login` })
    assert.equal(response.statusCode, 404)
    assert.equal(response.json().message, 'Single sign-on is not configured: this team has no SAML identity provider')
  })
})
