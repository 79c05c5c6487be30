import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { freePort, installOidcSettings, startOidcProvider, startSamlIdp } from '@tracewell/test-support'
import type { BrowserContext } from 'playwright-core'
import { openConsole, screenshot } from '../support/browser.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { assertNoProblems, signedInConsole, signedOutErrors } from '../support/console-session.ts'

// Single sign-on in the console (issue 44 §3, §6): the sign-in page's button for the install's
// OpenID Connect provider, through the provider's own login page (oidc-provider, started here),
// and the team's single sign-on page: read-only for an admin, a form for an owner.

const port = await freePort()
const publicUrl = `http://127.0.0.1:${port}`
const oidc = await startOidcProvider({
  redirectUris: [`${publicUrl}/api/auth/oidc/callback`],
  accounts: {
    olga: { email: 'olga@acme.test', email_verified: true, name: 'Olga', groups: ['tw-owners'] },
  },
})

describe('single sign-on in the console', () => {
  const fx = consoleFixture(undefined, {
    PORT: String(port),
    ...installOidcSettings(oidc, publicUrl),
    OIDC_DISPLAY_NAME: 'Acme SSO',
    OIDC_ALLOWED_DOMAINS: 'acme.test',
    OIDC_ROLE_CLAIM: 'groups',
    OIDC_ROLE_MAP: 'tw-owners=owner',
    // The first test makes an owner; the admin's console of the next still signs in with the team key.
    CONSOLE_KEY_SIGN_IN: 'true',
  })
  after(() => oidc.close())

  const teamIdOf = async (context: BrowserContext) => ((await (await context.request.get(`${publicUrl}/api/session`)).json()) as { teamId: string }).teamId

  it('signs a person in through the provider’s page from the sign-in page’s button', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, signedOutErrors)
    const { page, context } = opened
    await page.route(/fonts\.googleapis\.com/, (route) => route.fulfill({ status: 200, contentType: 'text/css', body: '' }))
    await page.goto('/sign-in')
    const button = page.getByRole('link', { name: 'Sign in with Acme SSO' })
    await button.waitFor()
    await screenshot(page, 'sso-sign-in-button')
    await button.click()
    await page.waitForURL(`${oidc.issuer}/**`)
    await page.locator('input[name="login"]').fill('olga')
    await page.locator('input[name="password"]').fill('any password')
    await screenshot(page, 'sso-provider-login')
    await page.getByRole('button', { name: 'Sign-in' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL(`${publicUrl}/**`)

    const session = (await context.cookies(publicUrl)).find((cookie) => cookie.name === 'tw_sid')
    assert.ok(session, 'signed in: a session cookie')
    assert.deepEqual([session.httpOnly, session.sameSite], [true, 'Lax'])
    // The person, an owner by their group, may change the team's single sign-on.
    const teamId = (await fx.stack.database.db.selectFrom('teams').select('id').executeTakeFirstOrThrow()).id
    const settings = await context.request.get(`${publicUrl}/api/teams/${teamId}/sso`)
    assert.equal(settings.status(), 200)
    assert.equal(((await settings.json()) as { mayChange: boolean }).mayChange, true)
    assertNoProblems(opened)
    await context.close()
  })

  it('brings a refused sign-in back to the sign-in page, with the reason', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, signedOutErrors)
    const { page, context } = opened
    // A provider's callback for a sign-in that was never started here (or was already used).
    await page.goto('/api/auth/oidc/callback?state=never-started&code=x')
    await page.waitForURL(/\/sign-in\?sso_error=/)
    const alert = page.getByRole('alert', { name: 'Single sign-on failed' })
    assert.match((await alert.textContent()) ?? '', /^Single sign-on failed: This sign-in is unknown, expired or already used/)
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).waitFor()
    await screenshot(page, 'sso-refused')
    assertNoProblems(opened)
    await context.close()
  })

  it('shows an admin (the team key) the settings without a control to change them', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Single sign-on' }).click()
    await page.getByRole('heading', { name: 'Single sign-on', level: 1 }).waitFor()
    await page.getByText(`${publicUrl}/api/auth/oidc/callback`).waitFor()
    await page.getByText('Only an owner of the team changes these.').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Save' }).count(), 0)
    assert.equal(await page.getByRole('textbox').count(), 0)
    await screenshot(page, 'sso-settings-admin')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('lets an owner add a SAML identity provider, whose button then shows on the sign-in page', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page, context } = opened
    await page.route(/fonts\.googleapis\.com/, (route) => route.fulfill({ status: 200, contentType: 'text/css', body: '' }))
    // The owner signs in through the provider too: the person's session decides what the API allows.
    await page.goto(`${publicUrl}/api/auth/oidc/login?return_to=/sso`)
    if ((await page.locator('input[name="login"]').count()) > 0) {
      await page.locator('input[name="login"]').fill('olga')
      await page.locator('input[name="password"]').fill('any password')
      await page.getByRole('button', { name: 'Sign-in' }).click()
    }
    if ((await page.getByRole('button', { name: 'Continue' }).count()) > 0) await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL(`${publicUrl}/sso`)
    await page.getByRole('heading', { name: 'Providers and rules' }).waitFor()

    const idp = await startSamlIdp()
    await page.getByLabel('A SAML 2.0 identity provider (ADFS, Okta, Entra ID…)').check()
    await page.getByLabel('Single sign-on URL').fill(idp.ssoUrl)
    await page.getByLabel('IdP entity id (optional)').fill(idp.entityId)
    await page.getByLabel('Signing certificate (PEM)').fill(idp.certificate)
    await page.getByLabel('Button label').fill('Acme ADFS')
    await page.getByLabel('Email domains that get an account at first sign-in').fill('acme.test')
    await page.getByLabel('Their role').selectOption('member')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').getByText('Saved.').waitFor()
    await screenshot(page, 'sso-settings-owner')

    const teamId = await teamIdOf(context)
    const saved = (await (await context.request.get(`${publicUrl}/api/teams/${teamId}/sso`)).json()) as { saml: { displayName: string } | null; allowedDomains: string[]; defaultRole: string }
    assert.deepEqual([saved.saml?.displayName, saved.allowedDomains, saved.defaultRole], ['Acme ADFS', ['acme.test'], 'member'])

    const signedOut = await openConsole(fx.browser, fx.stack.url, signedOutErrors)
    await signedOut.page.goto('/sign-in')
    await signedOut.page.getByRole('link', { name: 'Sign in with Acme ADFS' }).waitFor()
    assert.equal(await signedOut.page.getByRole('link', { name: /^Sign in with / }).count(), 2)
    await screenshot(signedOut.page, 'sso-sign-in-buttons')
    await signedOut.context.close()
    assertNoProblems(opened)
    await context.close()
  })
})
