import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { hashPassword } from '@tracewell/auth'
import { createProject, createUser, putTeamMember, setProjectRole } from '@tracewell/db'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInPerson, signedOutErrors, signInWithKey } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { openConsole } from '../support/browser.ts'

// People in the console (issue 44 §6): a person signs in with their email and password, sees the
// projects their role lets them see, and a viewer is shown no control they may not use (the API
// refuses it too). Once an owner exists, the team-key sign-in of older installs is off.

const password = 'correct horse battery staple'

/** The projects the picker offers (it is drawn once the projects are read). */
async function offeredProjects(page: Page): Promise<string[]> {
  await page.locator('.project-picker select').waitFor()
  return page.locator('.project-picker option').allTextContents()
}

describe('people in the console', () => {
  const fx = consoleFixture(async (stack) => {
    const db = stack.database.db
    const team = await db.selectFrom('teams').select('id').where('name', '=', 'Acme AI').executeTakeFirstOrThrow()
    const hidden = await createProject(db, { teamId: team.id, name: 'Hidden bot' })
    const hash = await hashPassword(password)
    const person = async (email: string, name: string, role: 'owner' | 'viewer') => {
      const user = await createUser(db, { email, name, passwordHash: hash, emailVerified: true })
      if (!user) throw new Error(`${email} exists`)
      await putTeamMember(db, team.id, user.id, role)
      return user
    }
    await person('olga@acme.example', 'Olga Owner', 'owner')
    const viewer = await person('vic@acme.example', 'Vic Viewer', 'viewer')
    await setProjectRole(db, hidden.id, viewer.id, 'none')
    return { hiddenProjectId: hidden.id }
  })

  it('shows a viewer only the projects they may see, and no control they may not use; the API refuses it too', async () => {
    const opened = await signedInPerson(fx.browser, fx.stack, 'vic@acme.example', password, [/status of 403 \(Forbidden\)/, /status of 404 \(Not Found\)/])
    const { page } = opened
    assert.equal(await page.locator('.profile-link').textContent(), 'Vic Viewer')
    assert.deepEqual(await offeredProjects(page), ['Support bot'], 'the hidden project is not offered')
    const sections = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents()
    assert.ok(!sections.includes('Playground') && !sections.includes('Channels'), `no section a viewer would be refused: ${sections.join(', ')}`)
    assert.ok(sections.includes('Traces') && sections.includes('Prompts'))

    await page.goto(`/prompts?project_id=${fx.stack.projectId}`)
    await page.getByRole('heading', { name: 'Prompts' }).waitFor()
    assert.equal(await page.getByRole('heading', { name: 'New registry' }).count(), 0, 'no form to make a registry')
    await page.goto(`/settings?project_id=${fx.stack.projectId}`)
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    await page.getByText('are run by its admins').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Create project' }).count(), 0)
    assert.equal(await page.getByRole('heading', { name: /^Keys of/ }).count(), 0)
    await screenshot(page, 'accounts-viewer-settings')

    // The API says the same to the viewer's own session, whatever the page shows.
    const refused = await page.evaluate(async (projectId) => {
      const response = await fetch(`/api/promptsets?project_id=${projectId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tracewell-csrf': '1' }, body: JSON.stringify({ name: 'sneaky' }) })
      return [response.status, (await response.json()).message]
    }, fx.stack.projectId)
    assert.deepEqual(refused, [403, 'Not allowed: this needs the permission prompts:write (docs/permissions.md)'])
    const hidden = await page.evaluate(async (projectId) => (await fetch(`/api/traces?project_id=${projectId}`)).status, fx.seeded.hiddenProjectId)
    assert.equal(hidden, 404, 'a hidden project is as if it did not exist')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('lets an owner see every project, rename themselves and list their sessions', async () => {
    const opened = await signedInPerson(fx.browser, fx.stack, 'olga@acme.example', password)
    const { page } = opened
    assert.deepEqual((await offeredProjects(page)).sort(), ['Hidden bot', 'Support bot'])
    const projectOpen = await page.locator('.project-picker select').inputValue()
    await page.locator('.profile-link').click()
    await page.getByRole('heading', { name: 'Profile' }).waitFor()
    // A team page has no project in its address: the picker shows the one the project pages would open.
    assert.equal(await page.locator('.project-picker select').inputValue(), projectOpen)
    await page.getByLabel(/^Display name/).fill('Olga the Owner')
    await page.getByRole('button', { name: 'Save the name' }).click()
    await page.getByText('Saved.').waitFor()
    await page.locator('.profile-link', { hasText: 'Olga the Owner' }).waitFor()
    await page.getByRole('table', { name: 'Your sessions' }).getByText('this browser').waitFor()
    await screenshot(page, 'accounts-profile')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL('**/sign-in')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('says why once an owner exists: the team-key sign-in is off', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, [...signedOutErrors, /status of 403 \(Forbidden\)/])
    const { page } = opened
    await page.goto('/sign-in')
    await signInWithKey(page, fx.stack.teamKey)
    await page.getByRole('alert').waitFor()
    assert.match((await page.getByRole('alert').textContent()) ?? '', /^Signing in with a team key is off now that this install has an owner account/)
    await page.getByLabel('Email').fill('vic@acme.example')
    await page.getByLabel('Password').fill('not the password at all')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByText('Wrong email or password').waitFor()
    await screenshot(page, 'accounts-sign-in-refused')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
