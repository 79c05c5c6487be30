import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ConfigError } from '@tracewell/config'
import { passwordSignInRefusedBy } from '@tracewell/db'
import { startSamlIdp } from '@tracewell/test-support'
import { ssoOptionsOf } from '../src/accounts/sso/sso-options.ts'
import { roleFromClaims } from '../src/accounts/sso/sso-accounts.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'
import { addPerson, asPerson, withSession, type SignedInPerson } from './people.helper.ts'

// A team's single sign-on settings (GET/PUT /api/teams/:teamId/sso): who may read and change
// them, what is refused and why, and the password sign-in they can turn off (issue 44 §3).


const samlOnly = (overrides: Record<string, unknown> = {}) => ({
  oidc: null,
  saml: { entryPoint: 'https://idp.acme.test/sso', idpIssuer: null, idpCertificate: validCertificate, displayName: 'Acme ADFS' },
  allowedDomains: ['acme.test'],
  defaultRole: 'viewer',
  roleClaim: null,
  roleMap: {},
  passwordSignIn: true,
  ...overrides,
})
let validCertificate = ''

describe('team single sign-on settings', () => {
  let cp: TestControlPlane
  let workspace: Workspace
  let owner: SignedInPerson
  let admin: SignedInPerson
  let viewer: SignedInPerson
  let member: SignedInPerson

  before(async () => {
    validCertificate = (await startSamlIdp()).certificate
    cp = await startControlPlane({ SESSION_SECRET: 'a-session-secret-for-the-sso-settings-0123', PUBLIC_URL: 'https://tracewell.acme.test/' })
    workspace = await seedWorkspace(cp.db, 'Acme')
    owner = await withSession(addPerson(cp.db, workspace.teamId, 'owner', 'owner@acme.test', { password: false }), cp.db)
    admin = await withSession(addPerson(cp.db, workspace.teamId, 'admin', 'admin@acme.test', { password: false }), cp.db)
    member = await withSession(addPerson(cp.db, workspace.teamId, 'member', 'member@acme.test', { password: false }), cp.db)
    viewer = await withSession(addPerson(cp.db, workspace.teamId, 'viewer', 'viewer@acme.test', { password: false }), cp.db)
  })
  after(() => cp?.close())

  const url = () => `/api/teams/${workspace.teamId}/sso`
  const put = (person: SignedInPerson, payload: unknown) => cp.app.inject({ method: 'PUT', url: url(), headers: asPerson(person), payload: payload as object })

  it('shows an admin the defaults and what to register at the providers', async () => {
    const response = await cp.app.inject({ method: 'GET', url: url(), headers: { cookie: admin.cookie } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), {
      oidc: null,
      saml: null,
      allowedDomains: [],
      defaultRole: 'viewer',
      roleClaim: null,
      roleMap: {},
      passwordSignIn: true,
      serviceProvider: {
        oidcRedirectUri: 'https://tracewell.acme.test/api/auth/oidc/callback',
        samlMetadataUrl: `https://tracewell.acme.test/api/auth/saml/${workspace.teamId}/metadata`,
        samlAcsUrl: `https://tracewell.acme.test/api/auth/saml/${workspace.teamId}/acs`,
      },
      updatedAt: null,
      mayChange: false,
    })
    const byTeamKey = await cp.app.inject({ method: 'GET', url: url(), headers: { 'x-api-key': workspace.teamKey } })
    assert.equal(byTeamKey.statusCode, 200)
    assert.equal(byTeamKey.json().mayChange, false, 'a team key acts as an admin')
    assert.equal((await cp.app.inject({ method: 'GET', url: url(), headers: { cookie: owner.cookie } })).json().mayChange, true)
  })

  it('refuses a viewer to read them, and everyone but an owner to change them', async () => {
    const read = await cp.app.inject({ method: 'GET', url: url(), headers: { cookie: viewer.cookie } })
    assert.equal(read.statusCode, 403)
    assert.match(read.json().message, /sso:read/)
    for (const headers of [asPerson(admin), asPerson(member), { 'x-api-key': workspace.teamKey }]) {
      const response = await cp.app.inject({ method: 'PUT', url: url(), headers, payload: samlOnly() })
      assert.equal(response.statusCode, 403)
      assert.match(response.json().message, /sso:write/)
    }
    const withoutCsrf = await cp.app.inject({ method: 'PUT', url: url(), headers: { cookie: owner.cookie }, payload: samlOnly() })
    assert.equal(withoutCsrf.statusCode, 403)
    assert.match(withoutCsrf.json().message, /x-tracewell-csrf/)
  })

  it('answers 404 for another team’s settings', async () => {
    const other = await seedWorkspace(cp.db, 'Other')
    const response = await cp.app.inject({ method: 'GET', url: `/api/teams/${other.teamId}/sso`, headers: { cookie: owner.cookie } })
    assert.equal(response.statusCode, 404)
  })

  it('refuses bad settings, naming the field and the rule, and changes nothing', async () => {
    const cases: [unknown, number, RegExp][] = [
      [samlOnly({ saml: null, passwordSignIn: false }), 400, /^passwordSignIn: cannot be false without an identity provider/],
      [samlOnly({ saml: { entryPoint: 'https://idp.acme.test/sso', idpIssuer: null, idpCertificate: 'MIIBnotacertificate', displayName: 'x' } }), 400, /^saml\/idpCertificate: not an X\.509 certificate/],
      [samlOnly({ roleMap: { admins: 'admin' } }), 400, /^roleMap: needs roleClaim/],
      [samlOnly({ allowedDomains: ['Acme.test'] }), 400, /allowedDomains\/0/],
      [samlOnly({ defaultRole: 'superuser' }), 400, /defaultRole/],
      [samlOnly({ oidc: { issuer: 'http://127.0.0.1:9/', clientId: 'tracewell', displayName: 'Local' } }), 400, /^oidc\/issuer: .*(loopback|127\.0\.0\.1)/],
      [samlOnly({ oidc: { issuer: 'https://idp.invalid/', clientId: 'c', displayName: 'x' } }), 400, /^oidc\/issuer: /],
    ]
    for (const [payload, status, message] of cases) {
      const response = await put(owner, payload)
      assert.equal(response.statusCode, status, `${JSON.stringify(payload)} → ${response.body}`)
      assert.match(response.json().message, message)
    }
    assert.equal((await cp.db.selectFrom('team_sso_settings').selectAll().execute()).length, 0)
  })

  it('saves an owner’s settings whole, and turns password sign-in off for everyone but owners', async () => {
    const saved = await put(owner, samlOnly({ passwordSignIn: false, roleClaim: 'groups', roleMap: { 'tw-admins': 'admin' }, allowedDomains: ['acme.test', 'acme.test', '*'] }))
    assert.equal(saved.statusCode, 200, saved.body)
    assert.equal(saved.json().passwordSignIn, false)
    assert.deepEqual(saved.json().allowedDomains, ['acme.test', '*'])
    assert.deepEqual(saved.json().saml, { entryPoint: 'https://idp.acme.test/sso', idpIssuer: null, idpCertificate: validCertificate, displayName: 'Acme ADFS' })
    assert.equal((await cp.app.inject({ method: 'GET', url: url(), headers: { cookie: admin.cookie } })).json().passwordSignIn, false)

    assert.deepEqual(await passwordSignInRefusedBy(cp.db, member.id), { teamId: workspace.teamId, teamName: 'Acme' })
    assert.deepEqual(await passwordSignInRefusedBy(cp.db, admin.id), { teamId: workspace.teamId, teamName: 'Acme' })
    assert.equal(await passwordSignInRefusedBy(cp.db, owner.id), undefined, 'the owner’s break-glass path')

    const back = await put(owner, samlOnly({ passwordSignIn: true }))
    assert.equal(back.statusCode, 200)
    assert.equal(await passwordSignInRefusedBy(cp.db, member.id), undefined)
  })

  it('refuses a client secret where it could not be sealed (no LLM_CONNECTION_ENCRYPTION_KEY)', async () => {
    // Checked before the issuer: nothing is stored either way.
    const response = await put(owner, samlOnly({ oidc: { issuer: 'https://idp.invalid/', clientId: 'c', displayName: 'x', clientSecret: 'secret' } }))
    assert.equal(response.statusCode, 503)
    assert.match(response.json().message, /LLM_CONNECTION_ENCRYPTION_KEY is unset/)
  })
})

describe('single sign-on settings of the install', () => {
  const base = { OIDC_DISPLAY_NAME: 'SSO', OIDC_SCOPES: 'openid email', OIDC_DEFAULT_ROLE: 'viewer' as const, PUBLIC_URL: 'https://t.test' }

  it('needs OIDC_CLIENT_ID and PUBLIC_URL with OIDC_ISSUER, in one clear line', () => {
    assert.throws(() => ssoOptionsOf({ ...base, OIDC_ISSUER: 'https://idp.test' }), (error: Error) => error instanceof ConfigError && /^OIDC_CLIENT_ID is required with OIDC_ISSUER/.test(error.message))
    assert.throws(() => ssoOptionsOf({ ...base, PUBLIC_URL: undefined, OIDC_ISSUER: 'https://idp.test', OIDC_CLIENT_ID: 'c' }), /^ConfigError: PUBLIC_URL is required with OIDC_ISSUER/)
    assert.deepEqual(ssoOptionsOf({ ...base, PUBLIC_URL: undefined }), { publicUrl: undefined, installOidc: null })
  })

  it('reads the allowed domains and the role map', () => {
    const options = ssoOptionsOf({ ...base, OIDC_ISSUER: 'https://idp.test', OIDC_CLIENT_ID: 'c', OIDC_ALLOWED_DOMAINS: 'Acme.com, acme.co.uk', OIDC_ROLE_CLAIM: 'realm_access.roles', OIDC_ROLE_MAP: 'tw-admins=admin,eng=member' })
    assert.deepEqual(options.installOidc?.allowedDomains, ['acme.com', 'acme.co.uk'])
    assert.deepEqual(options.installOidc?.roleMap, { 'tw-admins': 'admin', eng: 'member' })
  })

  it('maps a role claim: the highest mapped value wins, a dotted path reaches into objects, role names stand for themselves without a map', () => {
    const rules = { allowedDomains: [], defaultRole: 'viewer' as const, roleClaim: 'realm_access.roles', roleMap: { eng: 'member' as const, 'tw-admins': 'admin' as const } }
    assert.equal(roleFromClaims(rules, { realm_access: { roles: ['eng', 'tw-admins', 'other'] } }), 'admin')
    assert.equal(roleFromClaims(rules, { realm_access: { roles: ['other'] } }), undefined)
    assert.equal(roleFromClaims({ ...rules, roleClaim: 'role', roleMap: {} }, { role: 'member' }), 'member')
    assert.equal(roleFromClaims({ ...rules, roleClaim: 'role', roleMap: {} }, { role: 'root' }), undefined)
    assert.equal(roleFromClaims({ ...rules, roleClaim: null }, { role: 'owner' }), undefined)
  })
})
