import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openConsole, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedOutErrors, signInWithKey } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'

describe('signing in to the console', () => {
  const fx = consoleFixture()

  it('says clearly when the key is wrong, or is a project key', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, signedOutErrors)
    const { page } = opened
    await page.goto('/traces')
    await page.waitForURL('**/sign-in')
    await signInWithKey(page, 'tw_team_not-a-real-key')
    await page.getByRole('alert').waitFor()
    assert.equal(await page.getByRole('alert').textContent(), 'That is not a live team API key. Sign in with a team key (it starts with tw_team_).')
    await screenshot(page, 'sign-in-wrong-key')

    await signInWithKey(page, fx.stack.projectKey)
    await page.getByText('That is a project key').waitFor()
    assert.equal(await page.getByRole('alert').textContent(), 'That is a project key, which sends traces. The console needs a team key (it starts with tw_team_).')
    assert.deepEqual(await opened.context.cookies(), [], 'no session cookie')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('signs in with the team key, keeps the session over a reload without storing the key, and signs out', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, signedOutErrors)
    const { page, context } = opened
    await page.goto('/settings')
    await page.waitForURL('**/sign-in')
    await screenshot(page, 'sign-in')
    await signInWithKey(page, fx.stack.teamKey)
    // Back where the visit started, as the team.
    await page.waitForURL('**/settings')
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    assert.equal(await page.locator('.team').textContent(), 'Acme AI')

    const [cookie, ...others] = await context.cookies()
    assert.deepEqual(others, [])
    assert.equal(cookie?.name, 'tw_session')
    assert.deepEqual([cookie?.httpOnly, cookie?.sameSite, cookie?.secure, cookie?.path], [true, 'Strict', false, '/'])
    assert.ok(!cookie?.value.includes(fx.stack.teamKey.slice(8)), 'the cookie holds no key')
    const stored = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage } }))
    assert.ok(!stored.includes(fx.stack.teamKey.slice(8)), 'the key is in no browser storage')
    assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read the session cookie')

    await page.reload()
    await page.getByRole('heading', { name: 'Settings' }).waitFor()

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL('**/sign-in')
    assert.deepEqual(await context.cookies(), [])
    assertNoProblems(opened)
    await context.close()
  })

  it('shows the sign-in page and the app in one theme: the system’s, or the one chosen', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, signedOutErrors, { colorScheme: 'light' })
    const { page } = opened
    const theme = () => page.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor])
    const light = ['light', 'rgb(246, 247, 249)']
    const dark = ['dark', 'rgb(15, 18, 23)']
    await page.goto('/sign-in')
    await page.getByLabel('Email').waitFor()
    assert.deepEqual(await theme(), light, 'a light system: a light sign-in page')
    await screenshot(page, 'sign-in-light')

    await signInWithKey(page, fx.stack.teamKey)
    await page.getByRole('heading', { name: 'Traces' }).waitFor()
    assert.deepEqual(await theme(), light, 'and a light app')

    // The system switches: the console follows, while nobody has chosen.
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark')
    assert.deepEqual(await theme(), dark)

    // A choice holds over the system's, on the sign-in page too.
    await page.getByRole('button', { name: 'Switch to the light theme' }).click()
    assert.deepEqual(await theme(), light)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Email').waitFor()
    assert.deepEqual(await theme(), light, 'chosen light, on a dark system')
    await page.getByRole('button', { name: 'Switch to the dark theme' }).click()
    assert.deepEqual(await theme(), dark)
    await page.reload()
    await page.getByLabel('Email').waitFor()
    assert.deepEqual(await theme(), dark)
    await screenshot(page, 'sign-in-dark-chosen')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
