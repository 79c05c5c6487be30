import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { verifyPassword } from '@tracewell/auth'
import { findUserCredentialsByEmail, sql, teamRoleOf } from '@tracewell/db'
import { startSmtpReceiver, type SmtpReceiver } from '@tracewell/test-support'
import { csrf, mailText, seedTeam, sessionCookieSet, signedInPerson, testPassword, type SignedInPerson } from './people.helper.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane } from './helper.ts'

const sessionSecret = 'session-secret-for-tests-0123456789abcdef'
const publicUrl = 'https://tracewell.example.com'

describe('invitations', () => {
  let cp: TestControlPlane
  let smtp: SmtpReceiver
  let teamId: string
  let projectIds: [string, string]
  let owner: SignedInPerson
  let admin: SignedInPerson
  let member: SignedInPerson

  before(async () => {
    smtp = await startSmtpReceiver()
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret, SMTP_URL: smtp.url, MAIL_FROM: 'tracewell@example.com', PUBLIC_URL: publicUrl })
    ;({ teamId, projectIds } = await seedTeam(cp.db, 'Acme'))
    owner = await signedInPerson(cp.db, teamId, 'owner', 'Olive Owner')
    admin = await signedInPerson(cp.db, teamId, 'admin', 'Ada Admin')
    member = await signedInPerson(cp.db, teamId, 'member', 'Mo Member')
  })
  after(async () => {
    await cp?.close()
    await smtp?.close()
  })

  const invite = (by: SignedInPerson, body: Record<string, unknown>, team = teamId) =>
    cp.app.inject({ method: 'POST', url: `/api/teams/${team}/invitations`, headers: { cookie: by.cookie, ...csrf }, payload: body })
  const accept = (token: string, body: Record<string, unknown>, headers: Record<string, string> = csrf) =>
    cp.app.inject({ method: 'POST', url: `/api/invitations/${token}/accept`, headers, payload: body })
  const tokenOf = (url: string) => url.split('/invitations/')[1] as string

  it('mails the link, answers it too, and the invited person makes their account with the roles given', async () => {
    const response = await invite(admin, { email: 'Newcomer@Example.com', role: 'member', projectRoles: [{ projectId: projectIds[1], role: 'none' }] })
    assert.equal(response.statusCode, 201, response.body)
    const created = response.json()
    assert.match(created.url, /^https:\/\/tracewell\.example\.com\/invitations\/[A-Za-z0-9_-]{43}$/)
    assert.deepEqual([created.mailed, created.mailError], [true, null])
    const expiresIn = Date.parse(created.expiresAt) - Date.now()
    assert.ok(expiresIn > 7 * 86_400_000 - 60_000 && expiresIn <= 7 * 86_400_000, `expires in 7 days, not ${expiresIn} ms`)

    const mail = smtp.mails.at(-1)
    // nodemailer writes the domain in lower case.
    assert.deepEqual([mail?.from, mail?.to], ['tracewell@example.com', ['Newcomer@example.com']])
    const text = mailText(mail?.data ?? '')
    assert.match(text, /Subject: \[Tracewell\] Ada Admin invited you to Acme/)
    assert.ok(text.includes(`Accept the invitation: ${created.url}`), 'the mail carries the link')

    const listed = await cp.app.inject({ url: `/api/teams/${teamId}/invitations`, headers: { cookie: member.cookie } })
    assert.equal(listed.statusCode, 200)
    assert.deepEqual(
      listed.json().invitations.map((invitation: Record<string, unknown>) => [invitation.email, invitation.role, invitation.state, invitation.mailed, invitation.invitedBy]),
      [['Newcomer@Example.com', 'member', 'pending', true, { id: admin.id, name: 'Ada Admin' }]],
    )

    const token = tokenOf(created.url)
    const preview = await cp.app.inject({ url: `/api/invitations/${token}` })
    assert.deepEqual(preview.json(), { teamName: 'Acme', email: 'Newcomer@Example.com', role: 'member', expiresAt: created.expiresAt, accountExists: false, signupAllowed: true })

    const accepted = await accept(token, { name: 'Nia Newcomer', password: testPassword })
    assert.equal(accepted.statusCode, 201, accepted.body)
    const joined = accepted.json<{ user: { id: string }; teamId: string; signedIn: boolean }>()
    assert.deepEqual({ ...joined, user: { ...joined.user, id: 'id' } }, { user: { id: 'id', email: 'Newcomer@Example.com', name: 'Nia Newcomer' }, teamId, signedIn: true })
    const cookie = sessionCookieSet(accepted)

    const members = (await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie } })).json().members
    const newcomer = members.find((candidate: { email: string }) => candidate.email === 'Newcomer@Example.com')
    assert.deepEqual([newcomer.role, newcomer.projectRoles], ['member', [{ projectId: projectIds[1], role: 'none' }]])
    const credentials = await findUserCredentialsByEmail(cp.db, 'newcomer@example.com')
    assert.equal(credentials?.emailVerified, true, 'the link came by mail: the address is verified')
    assert.ok(await verifyPassword(testPassword, credentials?.passwordHash ?? ''))
    const stillListed = (await cp.app.inject({ url: `/api/teams/${teamId}/invitations`, headers: { cookie } })).json().invitations
    assert.deepEqual(stillListed, [], 'an accepted invitation is no longer listed')
  })

  it('works once: a second use is 410 and changes nothing', async () => {
    const token = tokenOf((await invite(owner, { email: 'once@example.com', role: 'viewer' })).json().url)
    assert.equal((await accept(token, { name: 'Once', password: testPassword })).statusCode, 201)
    const again = await accept(token, { name: 'Twice', password: testPassword })
    assert.deepEqual([again.statusCode, again.json()], [410, { message: 'This invitation was already used; ask for a new one if you still need to join' }])
    assert.equal(again.headers['set-cookie'], undefined)
    assert.equal((await cp.app.inject({ url: `/api/invitations/${token}` })).statusCode, 410)
  })

  it('refuses an expired, a revoked, a replaced and an unknown link, each naming why', async () => {
    const expired = tokenOf((await invite(owner, { email: 'late@example.com', role: 'member' })).json().url)
    await sql`update invitations set expires_at = now() - interval '1 second' where lower(email) = 'late@example.com'`.execute(cp.db)
    const lateAnswer = await accept(expired, { name: 'Late', password: testPassword })
    assert.equal(lateAnswer.statusCode, 410)
    assert.match(lateAnswer.json().message, /^This invitation expired at \d{4}-\d\d-\d\dT[\d:.]+Z; ask for a new one$/)
    const listed = (await cp.app.inject({ url: `/api/teams/${teamId}/invitations`, headers: { cookie: owner.cookie } })).json().invitations
    assert.deepEqual(listed.map((invitation: { email: string; state: string }) => [invitation.email, invitation.state]), [['late@example.com', 'expired']])

    const first = (await invite(owner, { email: 'twice@example.com', role: 'member' })).json()
    const second = (await invite(owner, { email: 'TWICE@example.com', role: 'viewer' })).json()
    const replaced = await accept(tokenOf(first.url), { name: 'Twice', password: testPassword })
    assert.deepEqual([replaced.statusCode, replaced.json()], [410, { message: 'This invitation was revoked (or replaced by a newer one); ask for a new one' }])

    const revoke = await cp.app.inject({ method: 'DELETE', url: `/api/teams/${teamId}/invitations/${second.id}`, headers: { cookie: admin.cookie, ...csrf } })
    assert.equal(revoke.statusCode, 204)
    assert.equal((await accept(tokenOf(second.url), { name: 'Twice', password: testPassword })).statusCode, 410)
    const revokeAgain = await cp.app.inject({ method: 'DELETE', url: `/api/teams/${teamId}/invitations/${second.id}`, headers: { cookie: admin.cookie, ...csrf } })
    assert.deepEqual([revokeAgain.statusCode, revokeAgain.json()], [404, { message: 'No open invitation with this id in this team' }])

    const unknown = await accept('A'.repeat(43), { name: 'Nobody', password: testPassword })
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: 'No such invitation: check that the whole link was copied' }])
    assert.equal(await findUserCredentialsByEmail(cp.db, 'twice@example.com'), undefined, 'no account was made')
  })

  it('lets nobody invite above their own role, nor a member invite at all', async () => {
    const adminInvitesOwner = await invite(admin, { email: 'boss@example.com', role: 'owner' })
    assert.deepEqual([adminInvitesOwner.statusCode, adminInvitesOwner.json()], [403, { message: 'body/role: owner is above your own role (admin); nobody grants a role above their own' }])
    const adminGivesOwnerOnProject = await invite(admin, { email: 'boss@example.com', role: 'viewer', projectRoles: [{ projectId: projectIds[0], role: 'owner' }] })
    assert.deepEqual([adminGivesOwnerOnProject.statusCode, adminGivesOwnerOnProject.json()], [403, { message: 'body/projectRoles/0/role: owner is above your own role (admin); nobody grants a role above their own' }])
    const memberInvites = await invite(member, { email: 'friend@example.com', role: 'viewer' })
    assert.deepEqual([memberInvites.statusCode, memberInvites.json()], [403, { message: 'Not allowed: this needs the permission members:manage (docs/permissions.md)' }])
    const ownerInvitesOwner = await invite(owner, { email: 'co-owner@example.com', role: 'owner' })
    assert.equal(ownerInvitesOwner.statusCode, 201)
    const listed = (await cp.app.inject({ url: `/api/teams/${teamId}/invitations`, headers: { cookie: owner.cookie } })).json().invitations
    assert.ok(!listed.some((invitation: { email: string }) => invitation.email === 'boss@example.com' || invitation.email === 'friend@example.com'), 'nothing refused was stored')
  })

  it('refuses bad input with the field and the rule', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ email: 'not-an-email', role: 'member' }, 'body/email: must match pattern "^[^@\\s]+@[^@\\s]+$"'],
      [{ email: 'a@example.com', role: 'superuser' }, 'body/role: must be equal to constant'],
      [{ email: 'a@example.com', role: 'member', projectRoles: [{ projectId: 'nope', role: 'member' }] }, 'body/projectRoles/0/projectId: no project nope in this team'],
      [{ email: 'a@example.com', role: 'member', projectRoles: [{ projectId: projectIds[0], role: 'member' }, { projectId: projectIds[0], role: 'viewer' }] }, `body/projectRoles/1/projectId: project ${projectIds[0]} is named twice`],
      [{ email: member.email.toUpperCase(), role: 'viewer' }, `body/email: ${member.email.toUpperCase()} is already a member of this team; change their role instead`],
    ]
    for (const [body, message] of cases) {
      const response = await invite(owner, body)
      assert.deepEqual([response.statusCode >= 400 && response.statusCode < 500, response.json().message], [true, message], JSON.stringify(body))
    }
    const other = await seedTeam(cp.db, 'Other')
    const otherProject = await invite(owner, { email: 'a@example.com', role: 'member', projectRoles: [{ projectId: other.projectIds[0], role: 'member' }] })
    assert.deepEqual([otherProject.statusCode, otherProject.json().message], [400, `body/projectRoles/0/projectId: no project ${other.projectIds[0]} in this team`])
  })

  it("answers 404 for another team's invitations", async () => {
    const other = await seedTeam(cp.db, 'Elsewhere')
    const stranger = await signedInPerson(cp.db, other.teamId, 'owner', 'Sam Stranger')
    const response = await invite(stranger, { email: 'x@example.com', role: 'member' }, teamId)
    assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Team not found' }])
    const list = await cp.app.inject({ url: `/api/teams/${teamId}/invitations`, headers: { cookie: stranger.cookie } })
    assert.equal(list.statusCode, 404)
  })

  it('refuses a weak password and a missing name, and keeps the invitation usable', async () => {
    const token = tokenOf((await invite(owner, { email: 'weak@example.com', role: 'member' })).json().url)
    const short = await accept(token, { name: 'Weak', password: 'short' })
    assert.deepEqual([short.statusCode, short.json()], [400, { message: 'body/password: must be at least 12 characters long' }])
    const noName = await accept(token, { password: testPassword })
    assert.deepEqual([noName.statusCode, noName.json()], [400, { message: 'body/name: required to create your account' }])
    const noCsrf = await accept(token, { name: 'Weak', password: testPassword }, {})
    assert.equal(noCsrf.statusCode, 403)
    assert.match(noCsrf.json().message, /^Missing header x-tracewell-csrf: 1/)
    assert.equal(await findUserCredentialsByEmail(cp.db, 'weak@example.com'), undefined)
    assert.equal((await accept(token, { name: 'Strong', password: testPassword })).statusCode, 201, 'the invitation still works')
  })

  it('lets a signed-in person with that email join, and refuses anyone else', async () => {
    const other = await seedTeam(cp.db, 'Their team')
    const existing = await signedInPerson(cp.db, other.teamId, 'owner', 'Ezra Existing')
    const token = tokenOf((await invite(owner, { email: existing.email, role: 'viewer', projectRoles: [{ projectId: projectIds[0], role: 'member' }] })).json().url)
    const preview = (await cp.app.inject({ url: `/api/invitations/${token}` })).json()
    assert.equal(preview.accountExists, true)

    const signedOut = await accept(token, { name: 'Impostor', password: testPassword })
    assert.deepEqual([signedOut.statusCode, signedOut.json()], [409, { message: `An account with ${existing.email} exists: sign in with it, then accept the invitation` }])
    const wrongPerson = await accept(token, {}, { ...csrf, cookie: member.cookie })
    assert.deepEqual([wrongPerson.statusCode, wrongPerson.json()], [403, { message: `This invitation is for ${existing.email}, and you are signed in as ${member.email}: sign out first, or ask for an invitation to your address` }])

    const joined = await accept(token, {}, { ...csrf, cookie: existing.cookie })
    assert.equal(joined.statusCode, 200, joined.body)
    assert.deepEqual(joined.json(), { user: { id: existing.id, email: existing.email, name: 'Ezra Existing' }, teamId, signedIn: true })
    assert.equal(joined.headers['set-cookie'], undefined, 'the session goes on')
    assert.equal(await teamRoleOf(cp.db, teamId, existing.id), 'viewer')
    assert.equal(await teamRoleOf(cp.db, other.teamId, existing.id), 'owner', 'their other team is untouched')
  })

  it('lets a team key invite, as an admin', async () => {
    const ws = await seedWorkspace(cp.db, 'Keyed')
    const byKey = await cp.app.inject({ method: 'POST', url: `/api/teams/${ws.teamId}/invitations`, headers: { 'x-api-key': ws.teamKey }, payload: { email: 'bot-invited@example.com', role: 'admin' } })
    assert.equal(byKey.statusCode, 201, byKey.body)
    const ownerByKey = await cp.app.inject({ method: 'POST', url: `/api/teams/${ws.teamId}/invitations`, headers: { 'x-api-key': ws.teamKey }, payload: { email: 'bot-owner@example.com', role: 'owner' } })
    assert.equal(ownerByKey.statusCode, 403)
    const listed = (await cp.app.inject({ url: `/api/teams/${ws.teamId}/invitations`, headers: { 'x-api-key': ws.teamKey } })).json().invitations
    assert.deepEqual(listed.map((invitation: { email: string; invitedBy: unknown }) => [invitation.email, invitation.invitedBy]), [['bot-invited@example.com', null]])
    const projectKey = await cp.app.inject({ method: 'POST', url: `/api/teams/${ws.teamId}/invitations`, headers: { 'x-api-key': ws.projectKey }, payload: { email: 'p@example.com', role: 'viewer' } })
    assert.equal(projectKey.statusCode, 403)
  })

  it('refuses a team its 101st invitation of the hour with 429 and when to come back, sending no mail', async () => {
    const busy = await seedTeam(cp.db, 'Busy')
    const busyOwner = await signedInPerson(cp.db, busy.teamId, 'owner', 'Bea Busy')
    // 100 invitations made in the last hour (the oldest 50 minutes ago), as the route makes them.
    await cp.db
      .insertInto('invitations')
      .values(Array.from({ length: 100 }, (_, i) => ({
        team_id: busy.teamId, email: `person${i}@busy.example`, role: 'member', project_roles: '[]', token_hash: `busy-${i}`,
        expires_at: new Date(Date.now() + 86_400_000), created_at: new Date(Date.now() - (i === 0 ? 50 : 1) * 60_000),
      })))
      .execute()
    const mailsBefore = smtp.mails.length
    const refused = await invite(busyOwner, { email: 'one.more@busy.example', role: 'member' }, busy.teamId)
    assert.equal(refused.statusCode, 429, refused.body)
    assert.match(refused.json().message, /^This team made 100 invitations in the last hour, the most an hour allows \(100\); try again in \d+ s$/)
    const retryAfter = Number(refused.headers['retry-after'])
    assert.ok(retryAfter > 500 && retryAfter <= 600, `retry-after ${retryAfter}: when the oldest leaves the hour`)
    assert.equal(smtp.mails.length, mailsBefore)
    // Another team is not held back by this one.
    assert.equal((await invite(owner, { email: 'not.busy@acme.example', role: 'viewer' })).statusCode, 201)
  })
})

describe('invitations without SMTP, with SIGNUP=off', () => {
  let cp: TestControlPlane
  let teamId: string
  let owner: SignedInPerson

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret, SIGNUP: 'off' })
    ;({ teamId } = await seedTeam(cp.db, 'Quiet'))
    owner = await signedInPerson(cp.db, teamId, 'owner', 'Quinn Owner')
  })
  after(() => cp?.close())

  it('answers the link to copy, on the address the admin reached, and says why it was not mailed', async () => {
    const response = await cp.app.inject({
      method: 'POST',
      url: `/api/teams/${teamId}/invitations`,
      headers: { cookie: owner.cookie, ...csrf, host: 'tracewell.internal:3000' },
      payload: { email: 'copy@example.com', role: 'member' },
    })
    assert.equal(response.statusCode, 201)
    const created = response.json()
    assert.match(created.url, /^http:\/\/tracewell\.internal:3000\/invitations\/[A-Za-z0-9_-]{43}$/)
    assert.deepEqual([created.mailed, created.mailError], [false, 'the server has no SMTP_URL and MAIL_FROM: copy the link to the person'])

    const token = created.url.split('/invitations/')[1]
    assert.equal((await cp.app.inject({ url: `/api/invitations/${token}` })).json().signupAllowed, false)
    const refused = await cp.app.inject({ method: 'POST', url: `/api/invitations/${token}/accept`, headers: csrf, payload: { name: 'Copy', password: testPassword } })
    assert.deepEqual([refused.statusCode, refused.json()], [403, { message: 'New accounts are turned off on this server (SIGNUP=off): ask an admin to make yours through single sign-on' }])
    assert.equal(await findUserCredentialsByEmail(cp.db, 'copy@example.com'), undefined)
  })

  it('lets an existing account join with SIGNUP=off, unverified since the link was not mailed', async () => {
    const person = await signedInPerson(cp.db, null, 'viewer', 'Una Unverified')
    await sql`update users set email_verified = false where id = ${person.id}`.execute(cp.db)
    const created = (await cp.app.inject({ method: 'POST', url: `/api/teams/${teamId}/invitations`, headers: { cookie: owner.cookie, ...csrf }, payload: { email: person.email, role: 'viewer' } })).json()
    const token = created.url.split('/invitations/')[1]
    const joined = await cp.app.inject({ method: 'POST', url: `/api/invitations/${token}/accept`, headers: { ...csrf, cookie: person.cookie }, payload: {} })
    assert.equal(joined.statusCode, 200, joined.body)
    assert.equal((await findUserCredentialsByEmail(cp.db, person.email))?.emailVerified, false)
  })

})
