import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { listTeamMembers } from '@tracewell/db'
import { eventuallyEqual, openConsole, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole, signedOutErrors } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'

// The first owner through the printed setup link, then invitations and members through the
// console (docs/accounts.md): without SMTP, the invitation's link is shown to copy.

const password = 'a long enough passphrase'

describe('members and invitations in the console', () => {
  // The admin here is a team-key session, kept once an owner exists by CONSOLE_KEY_SIGN_IN.
  const fx = consoleFixture(undefined, { CONSOLE_KEY_SIGN_IN: 'true' })
  const teamId = async () => (await fx.stack.database.db.selectFrom('teams').select('id').where('name', '=', 'Acme AI').executeTakeFirstOrThrow()).id

  it('makes the owner through the setup link printed at start, once', async () => {
    const link = /http:\/\/127\.0\.0\.1:\d+\/setup\/[A-Za-z0-9_-]{43}/.exec(fx.stack.output())?.[0]
    assert.ok(link, `the start printed a setup link:\n${fx.stack.output()}`)
    const opened = await openConsole(fx.browser, fx.stack.url, [...signedOutErrors, /status of 400 \(Bad Request\)/, /status of 410 \(Gone\)/])
    const { page } = opened
    await page.goto(link)
    await page.getByRole('heading', { name: 'Set up Tracewell' }).waitFor()
    await page.getByLabel('Email').fill('olive@example.com')
    await page.getByLabel('Your name').fill('Olive Owner')
    await page.getByLabel('Password').fill('short')
    await page.getByRole('button', { name: 'Make the owner account' }).click()
    await page.getByRole('alert').getByText('body/password: must be at least 12 characters long').waitFor()
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Make the owner account' }).click()
    await page.getByRole('heading', { name: 'Tracewell is yours' }).waitFor()
    await screenshot(page, 'members-setup-done')
    assert.deepEqual(
      (await listTeamMembers(fx.stack.database.db, await teamId())).map((member) => [member.email, member.role]),
      [['olive@example.com', 'owner']],
    )

    await page.goto(link)
    await page.getByRole('heading', { name: 'This setup link cannot be used' }).waitFor()
    await page.getByRole('alert').getByText('This Tracewell has its owner already: sign in, or ask an owner for an invitation').waitFor()
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('invites with a link to copy, the invited person joins, and an admin re-roles, hides a project and removes them', async () => {
    const admin = await signedInConsole(fx.browser, fx.stack)
    const { page } = admin
    await page.getByRole('link', { name: 'Members' }).click()
    await page.getByRole('heading', { name: 'Members', exact: true }).waitFor()
    const members = page.getByRole('table', { name: 'Members' })
    await members.getByText('Olive Owner').waitFor()
    // A team key acts as an admin: the owner's role is above it, so it has no control there.
    assert.equal(await page.getByLabel('Role of Olive Owner', { exact: true }).count(), 0)
    assert.equal(await page.getByRole('button', { name: 'Remove Olive Owner' }).count(), 0)
    const inviteSection = page.getByRole('region', { name: 'Invite someone' })
    assert.deepEqual(await inviteSection.getByLabel('Role of the invited person', { exact: true }).locator('option').allTextContents(), ['viewer', 'member', 'admin'], 'owner is not offered')
    await inviteSection.getByLabel('Email to invite').fill('nia@example.com')
    await inviteSection.getByLabel('Role of the invited person', { exact: true }).selectOption('member')
    await inviteSection.getByText('Project access (optional)').click()
    await page.getByLabel('Role of the invited person on Support bot').selectOption('viewer')
    await inviteSection.getByRole('button', { name: 'Invite' }).click()
    const linkShown = page.getByLabel('The invitation link')
    await linkShown.waitFor()
    const invitationUrl = ((await linkShown.textContent()) ?? '').trim()
    assert.match(invitationUrl, new RegExp(`^${fx.stack.url.replaceAll('.', '\\.')}/invitations/[A-Za-z0-9_-]{43}$`))
    await page.getByText('Invitation for nia@example.com made, not mailed: the server has no SMTP_URL and MAIL_FROM: copy the link to the person.').waitFor()
    await page.getByRole('table', { name: 'Open invitations' }).getByText('nia@example.com').waitFor()
    await screenshot(page, 'members-invited')

    const invited = await openConsole(fx.browser, fx.stack.url, signedOutErrors)
    await invited.page.goto(invitationUrl)
    await invited.page.getByRole('heading', { name: 'Join Acme AI' }).waitFor()
    await invited.page.getByText('You are invited to Acme AI as member, as nia@example.com.', { exact: false }).waitFor()
    await invited.page.getByLabel('Your name').fill('Nia Newcomer')
    await invited.page.getByLabel('Password').fill(password)
    await screenshot(invited.page, 'members-accept')
    await invited.page.getByRole('button', { name: 'Make my account and join' }).click()
    await invited.page.getByRole('heading', { name: 'Welcome to Acme AI' }).waitFor()
    await screenshot(invited.page, 'members-accepted')
    assertNoProblems(invited)
    await invited.context.close()

    await page.reload()
    await members.getByRole('cell', { name: 'Nia Newcomer', exact: true }).waitFor()
    assert.equal(await page.getByRole('table', { name: 'Open invitations' }).count(), 0, 'the accepted invitation is gone')
    await page.getByLabel('Role of Nia Newcomer', { exact: true }).selectOption('viewer')
    await page.getByRole('button', { name: 'Project access of Nia Newcomer' }).click()
    const onProject = page.getByLabel('Role of Nia Newcomer on Support bot')
    assert.equal(await onProject.inputValue(), 'viewer', 'the role the invitation gave')
    await onProject.selectOption('none')
    const stored = async () => (await listTeamMembers(fx.stack.database.db, await teamId())).find((member) => member.email === 'nia@example.com')
    const expected: unknown[] = ['viewer', [{ projectId: fx.stack.projectId, role: 'none' }]]
    assert.deepEqual(await eventuallyEqual<unknown[]>(async () => stored().then((nia) => [nia?.role, nia?.projectRoles]), expected), expected)
    assert.equal(await page.getByRole('button', { name: 'Project access of Nia Newcomer' }).textContent(), '1 project differs')
    await screenshot(page, 'members-project-access')

    await page.getByRole('button', { name: 'Remove Nia Newcomer' }).click()
    await page.getByRole('button', { name: 'Remove Nia Newcomer: their sessions end now' }).click()
    await members.getByRole('cell', { name: 'Nia Newcomer', exact: true }).waitFor({ state: 'detached' })
    assert.equal(await stored(), undefined)
    assertNoProblems(admin)
    await admin.context.close()
  })

  it('revokes an invitation, whose link then says so', async () => {
    const admin = await signedInConsole(fx.browser, fx.stack)
    const { page } = admin
    await page.goto('/members')
    const inviteSection = page.getByRole('region', { name: 'Invite someone' })
    await inviteSection.getByLabel('Email to invite').fill('later@example.com')
    await inviteSection.getByRole('button', { name: 'Invite' }).click()
    const invitationUrl = ((await page.getByLabel('The invitation link').textContent()) ?? '').trim()
    await page.getByRole('button', { name: 'Revoke the invitation of later@example.com' }).click()
    await page.getByRole('table', { name: 'Open invitations' }).waitFor({ state: 'detached' })

    const invited = await openConsole(fx.browser, fx.stack.url, [...signedOutErrors, /status of 410 \(Gone\)/])
    await invited.page.goto(invitationUrl)
    await invited.page.getByRole('heading', { name: 'This invitation cannot be used' }).waitFor()
    await invited.page.getByText('This invitation was revoked (or replaced by a newer one); ask for a new one').waitFor()
    await screenshot(invited.page, 'members-revoked-link')
    assertNoProblems(invited)
    await invited.context.close()
    assertNoProblems(admin)
    await admin.context.close()
  })

  it('says on the forgot-password page what the server lacks without SMTP', async () => {
    const opened = await openConsole(fx.browser, fx.stack.url, [...signedOutErrors, /status of 503 \(Service Unavailable\)/])
    await opened.page.goto('/forgot-password')
    await opened.page.getByLabel('Email').fill('olive@example.com')
    await opened.page.getByRole('button', { name: 'Mail me a link' }).click()
    await opened.page.getByRole('alert').getByText('Password reset by mail needs SMTP_URL, MAIL_FROM and PUBLIC_URL set on the server; ask an admin of your team').waitFor()
    assertNoProblems(opened)
    await opened.context.close()
  })
})
