import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTeam, createUser, findUserCredentialsByEmail, putTeamMember, teamRoleOf } from '@tracewell/db'
import { freePort, installOidcSettings, startOidcProvider, type TestOidcProvider } from '@tracewell/test-support'
import { chromium, type Browser, type BrowserContext } from 'playwright-core'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'
import { addPerson, asPerson, withSession } from './people.helper.ts'

// Single sign-on through a real OpenID Connect provider (oidc-provider, started here), signed in
// on the provider's own login page in Chromium (issue 44 §3): success, and each way it must fail.

const accounts = {
  ada: { email: 'ada@acme.test', email_verified: true, name: 'Ada Lovelace', groups: ['tw-admins'] },
  bob: { email: 'Bob@Acme.test', email_verified: true, name: 'Bob', groups: ['everyone'] },
  eve: { email: 'eve@acme.test', email_verified: false, name: 'Eve' },
  mallory: { email: 'mallory@elsewhere.test', email_verified: true, name: 'Mallory' },
  carol: { email: 'carol@elsewhere.test', email_verified: true, name: 'Carol' },
  dan: { email: 'dan@acme.test', email_verified: true, name: 'Dan' },
}

describe('OpenID Connect sign-in', () => {
  let cp: TestControlPlane
  let oidc: TestOidcProvider
  let browser: Browser
  let workspace: Workspace
  let publicUrl: string

  before(async () => {
    const port = await freePort()
    publicUrl = `http://127.0.0.1:${port}`
    oidc = await startOidcProvider({ redirectUris: [`${publicUrl}/api/auth/oidc/callback`], accounts })
    cp = await startControlPlane({
      SESSION_SECRET: 'a-session-secret-for-the-oidc-tests-0123456789',
      ...installOidcSettings(oidc, publicUrl),
      OIDC_DISPLAY_NAME: 'Acme SSO',
      OIDC_ALLOWED_DOMAINS: 'acme.test',
      OIDC_ROLE_CLAIM: 'groups',
      OIDC_ROLE_MAP: 'tw-admins=admin',
      // Seals a team's client secret.
      LLM_CONNECTION_ENCRYPTION_KEY: 'ab'.repeat(32),
    })
    await cp.app.listen({ port, host: '127.0.0.1' })
    workspace = await seedWorkspace(cp.db, 'Acme')
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] })
  })
  after(async () => {
    await browser?.close()
    await cp?.close()
    await oidc?.close()
  })

  /** Goes to Tracewell's login, signs in at the provider as `login`, and answers what the callback answered. */
  async function signIn(context: BrowserContext, login: string, returnTo = '/traces', teamId?: string) {
    const page = await context.newPage()
    page.setDefaultTimeout(30_000)
    // The provider's page asks for a web font; nothing here reaches the Internet.
    await page.route(/fonts\.googleapis\.com/, (route) => route.abort())
    const callback = page.waitForResponse((response) => response.url().startsWith(`${publicUrl}/api/auth/oidc/callback`))
    await page.goto(`${publicUrl}/api/auth/oidc/login?return_to=${encodeURIComponent(returnTo)}${teamId === undefined ? '' : `&team_id=${teamId}`}`)
    if ((await page.locator('input[name="login"]').count()) > 0) {
      await page.locator('input[name="login"]').fill(login)
      await page.locator('input[name="password"]').fill('any password')
      await page.getByRole('button', { name: 'Sign-in' }).click()
      await page.waitForLoadState()
    }
    if (page.url().startsWith(oidc.issuer) && (await page.getByRole('button', { name: 'Continue' }).count()) > 0) await page.getByRole('button', { name: 'Continue' }).click()
    const answer = await callback
    const body = answer.status() >= 300 && answer.status() < 400 ? null : ((await answer.json()) as { message: string })
    const location = answer.headers().location
    // A refused sign-in sends the browser back to the console's sign-in page with the reason.
    const refusal = answer.status() === 303 && location?.startsWith('/sign-in?') ? new URL(location, publicUrl).searchParams.get('sso_error') : null
    return { page, status: answer.status(), location, body, refusal, callbackUrl: answer.url() }
  }

  const sessionCount = async () => Number((await cp.db.selectFrom('user_sessions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)

  it('lists the provider for the sign-in page', async () => {
    const response = await cp.app.inject({ method: 'GET', url: '/api/auth/sso/providers' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { providers: [{ id: 'oidc', protocol: 'oidc', teamId: null, displayName: 'Acme SSO', loginUrl: '/api/auth/oidc/login' }] })
  })

  it('signs a new person of an allowed domain in, with the role the groups claim maps to, and refuses the callback replayed', async () => {
    const context = await browser.newContext()
    const result = await signIn(context, 'ada')
    assert.equal(result.status, 302, JSON.stringify(result.body))
    assert.equal(result.location, '/traces')
    const cookies = await context.cookies(publicUrl)
    const session = cookies.find((cookie) => cookie.name === 'tw_sid')
    assert.ok(session, 'a session cookie')
    assert.deepEqual([session.httpOnly, session.sameSite], [true, 'Lax'])
    assert.equal(cookies.find((cookie) => cookie.name === 'tw_sso'), undefined, 'the attempt cookie is dropped')

    const ada = await findUserCredentialsByEmail(cp.db, 'ada@acme.test')
    assert.ok(ada)
    assert.deepEqual([ada.name, ada.emailVerified, ada.passwordHash], ['Ada Lovelace', true, null])
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, ada.id), 'admin')

    // Signed in: the session works on a route that needs an admin of the team.
    const settings = await result.page.request.get(`${publicUrl}/api/teams/${workspace.teamId}/sso`)
    assert.equal(settings.status(), 200)

    // The same callback again (code and state as the provider sent them): refused, no new session.
    const before = await sessionCount()
    const replay = await result.page.request.get(result.callbackUrl, { maxRedirects: 0 })
    assert.equal(replay.status(), 400)
    assert.match(((await replay.json()) as { message: string }).message, /already used \(a replayed callback or assertion is refused\)/)
    assert.equal(await sessionCount(), before)
    await context.close()
  })

  it('gives the default role when no group maps, and signs the same person in as the same account', async () => {
    const context = await browser.newContext()
    assert.equal((await signIn(context, 'bob')).status, 302)
    const bob = await findUserCredentialsByEmail(cp.db, 'bob@acme.test')
    assert.ok(bob)
    assert.equal(bob.email, 'Bob@Acme.test')
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, bob.id), 'viewer')
    await context.clearCookies()
    assert.equal((await signIn(context, 'bob')).status, 302)
    const users = await cp.db.selectFrom('users').select('id').where('email', 'ilike', 'bob@acme.test').execute()
    assert.deepEqual(users, [{ id: bob.id }])
    await context.close()
  })

  it('links an existing account with the same verified email, even of a domain not allowed', async () => {
    const carol = await createUser(cp.db, { email: 'carol@elsewhere.test', name: 'Carol', passwordHash: null, emailVerified: false })
    assert.ok(carol)
    await putTeamMember(cp.db, workspace.teamId, carol.id, 'member')
    const context = await browser.newContext()
    assert.equal((await signIn(context, 'carol')).status, 302)
    const linked = await cp.db.selectFrom('sso_identities').select(['provider', 'subject', 'user_id']).where('user_id', '=', carol.id).execute()
    assert.deepEqual(linked, [{ provider: 'oidc', subject: 'carol', user_id: carol.id }])
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, carol.id), 'member')
    await context.close()
  })

  it('refuses an unverified email: it neither makes an account nor takes one over', async () => {
    const context = await browser.newContext()
    const made = await signIn(context, 'eve')
    assert.equal(made.status, 303)
    assert.match(made.refusal ?? '', /did not say that your email address is verified/)
    assert.equal(await findUserCredentialsByEmail(cp.db, 'eve@acme.test'), undefined)

    const owner = await createUser(cp.db, { email: 'eve@acme.test', name: 'The real Eve', passwordHash: null, emailVerified: true })
    assert.ok(owner)
    await context.clearCookies()
    const takeover = await signIn(context, 'eve')
    assert.match(takeover.refusal ?? '', /did not say that your email address is verified/)
    assert.equal((await cp.db.selectFrom('sso_identities').selectAll().where('user_id', '=', owner.id).execute()).length, 0)
    assert.equal((await context.cookies(publicUrl)).find((cookie) => cookie.name === 'tw_sid'), undefined)
    await context.close()
  })

  it('refuses a new person of a domain not allowed', async () => {
    const context = await browser.newContext()
    const result = await signIn(context, 'mallory')
    assert.equal(result.status, 303)
    assert.equal(result.refusal, 'Single sign-on refused: people of the domain elsewhere.test do not get an account here (allowed: acme.test)')
    assert.equal(await findUserCredentialsByEmail(cp.db, 'mallory@elsewhere.test'), undefined)
    await context.close()
  })

  for (const [tampering, reason] of [
    ['wrong-audience', /"aud" \(audience\)/],
    ['expired', /"exp" \(expiration time\)/],
    ['tampered-signature', /signature/i],
  ] as const) {
    it(`refuses an ID token: ${tampering}`, async () => {
      const context = await browser.newContext()
      const before = await sessionCount()
      oidc.tampering = tampering
      try {
        const result = await signIn(context, 'ada')
        assert.equal(result.status, 303, JSON.stringify(result.body))
        assert.match(result.refusal ?? '', /^The identity provider’s answer was refused: /)
        assert.match(result.refusal ?? '', reason)
      } finally {
        oidc.tampering = 'none'
      }
      assert.equal(await sessionCount(), before)
      await context.close()
    })
  }

  it('signs a person in through a team’s own provider, into that team, its client secret kept sealed', async () => {
    const team = await createTeam(cp.db, { name: 'Beta' })
    const owner = await withSession(addPerson(cp.db, team.id, 'owner', 'owner@beta.test', { password: false }), cp.db)
    const saved = await cp.app.inject({
      method: 'PUT',
      url: `/api/teams/${team.id}/sso`,
      headers: asPerson(owner),
      payload: { oidc: { issuer: oidc.issuer, clientId: oidc.clientId, clientSecret: oidc.clientSecret, displayName: 'Beta Okta' }, saml: null, allowedDomains: ['acme.test'], defaultRole: 'member', roleClaim: null, roleMap: {}, passwordSignIn: true },
    })
    assert.equal(saved.statusCode, 200, saved.body)
    assert.deepEqual(saved.json().oidc, { issuer: oidc.issuer, clientId: oidc.clientId, displayName: 'Beta Okta', clientSecretSet: true })
    assert.ok(!saved.body.includes(oidc.clientSecret))
    const stored = await cp.db.selectFrom('team_sso_settings').select('oidc_client_secret_sealed').where('team_id', '=', team.id).executeTakeFirstOrThrow()
    assert.ok(stored.oidc_client_secret_sealed?.startsWith('v1:') && !stored.oidc_client_secret_sealed.includes(oidc.clientSecret))

    const providers = (await cp.app.inject({ method: 'GET', url: '/api/auth/sso/providers' })).json().providers
    assert.deepEqual(providers[1], { id: `oidc:${team.id}`, protocol: 'oidc', teamId: team.id, displayName: 'Beta Okta', loginUrl: `/api/auth/oidc/login?team_id=${team.id}` })

    const context = await browser.newContext()
    const result = await signIn(context, 'dan', '/', team.id)
    assert.equal(result.status, 302, JSON.stringify(result.body))
    const dan = await findUserCredentialsByEmail(cp.db, 'dan@acme.test')
    assert.ok(dan)
    assert.equal(await teamRoleOf(cp.db, team.id, dan.id), 'member')
    assert.equal(await teamRoleOf(cp.db, workspace.teamId, dan.id), undefined, 'not in the default team')
    const identity = await cp.db.selectFrom('sso_identities').select('provider').where('user_id', '=', dan.id).execute()
    assert.deepEqual(identity, [{ provider: `oidc:${team.id}:${oidc.issuer}` }])

    // Dan joins another team as well: the first team's provider no longer signs him in (its owner
    // controls what it asserts, and must not reach the other team through him).
    const gamma = await createTeam(cp.db, { name: 'Gamma' })
    await putTeamMember(cp.db, gamma.id, dan.id, 'viewer')
    await context.clearCookies()
    const refused = await signIn(context, 'dan', '/', team.id)
    assert.equal(refused.status, 303)
    assert.match(refused.refusal ?? '', /not \(only\) a member of this team/)
    await context.close()
  })

  it('refuses a callback in a browser other than the one that started the sign-in', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const started = await page.request.get(`${publicUrl}/api/auth/oidc/login`, { maxRedirects: 0 })
    assert.equal(started.status(), 302)
    const state = new URL(started.headers().location ?? '').searchParams.get('state') ?? ''
    const elsewhere = await cp.app.inject({ method: 'GET', url: `/api/auth/oidc/callback?code=stolen&state=${encodeURIComponent(state)}` })
    assert.equal(elsewhere.statusCode, 400)
    assert.match(elsewhere.json().message, /started in another browser/)
    // A browser (it asks for HTML) lands on the console's sign-in page with the same reason.
    const inBrowser = await cp.app.inject({ method: 'GET', url: `/api/auth/oidc/callback?code=stolen&state=${encodeURIComponent(state)}`, headers: { accept: 'text/html,application/xhtml+xml' } })
    assert.equal(inBrowser.statusCode, 303)
    assert.equal(new URL(inBrowser.headers.location as string, publicUrl).pathname, '/sign-in')
    assert.match(new URL(inBrowser.headers.location as string, publicUrl).searchParams.get('sso_error') ?? '', /unknown, expired or already used/)
    await context.close()
  })

  it('refuses a return_to that leaves Tracewell, naming the field', async () => {
    const response = await cp.app.inject({ method: 'GET', url: '/api/auth/oidc/login?return_to=//evil.test/x' })
    assert.equal(response.statusCode, 400)
    assert.match(response.json().message, /return_to/)
  })
})
