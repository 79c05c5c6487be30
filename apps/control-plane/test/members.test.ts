import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { rolesOnProject, sql, teamRoleOf } from '@tracewell/db'
import { csrf, seedTeam, sessionCookieOf, signedInPerson, type SignedInPerson } from './people.helper.ts'
import { startControlPlane, type TestControlPlane } from './helper.ts'

const sessionSecret = 'session-secret-for-tests-0123456789abcdef'

describe('members', () => {
  let cp: TestControlPlane
  let teamId: string
  let projectIds: [string, string]
  let owner: SignedInPerson
  let admin: SignedInPerson
  let member: SignedInPerson
  let viewer: SignedInPerson
  let team = 0

  // Every test on a team of its own: roles change here.
  beforeEach(async () => {
    ;({ teamId, projectIds } = await seedTeam(cp.db, `Team ${++team}`))
    owner = await signedInPerson(cp.db, teamId, 'owner', `Olive Owner ${team}`)
    admin = await signedInPerson(cp.db, teamId, 'admin', `Ada Admin ${team}`)
    member = await signedInPerson(cp.db, teamId, 'member', `Mo Member ${team}`)
    viewer = await signedInPerson(cp.db, teamId, 'viewer', `Vi Viewer ${team}`)
  })
  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret })
  })
  after(() => cp?.close())

  const change = (by: SignedInPerson, target: SignedInPerson, body: Record<string, unknown>) =>
    cp.app.inject({ method: 'PATCH', url: `/api/teams/${teamId}/members/${target.id}`, headers: { cookie: by.cookie, ...csrf }, payload: body })
  const remove = (by: SignedInPerson, target: SignedInPerson) => cp.app.inject({ method: 'DELETE', url: `/api/teams/${teamId}/members/${target.id}`, headers: { cookie: by.cookie, ...csrf } })
  const leave = (who: SignedInPerson) => cp.app.inject({ method: 'POST', url: `/api/teams/${teamId}/leave`, headers: { cookie: who.cookie, ...csrf } })
  const roles = async () =>
    Object.fromEntries(
      (await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie: owner.cookie } })).json().members.map((m: { name: string; role: string }) => [m.name.replace(/ \d+$/, ''), m.role]),
    )

  it('lists the members by name with their roles, to a viewer too', async () => {
    await cp.app.inject({ method: 'PATCH', url: `/api/teams/${teamId}/members/${viewer.id}`, headers: { cookie: owner.cookie, ...csrf }, payload: { projectRoles: [{ projectId: projectIds[0], role: 'member' }] } })
    const response = await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie: viewer.cookie } })
    assert.equal(response.statusCode, 200)
    const members = response.json().members
    assert.deepEqual(
      members.map((m: { name: string; email: string; role: string; projectRoles: unknown }) => [m.name, m.email, m.role, m.projectRoles]),
      [
        [admin.name, admin.email, 'admin', []],
        [member.name, member.email, 'member', []],
        [owner.name, owner.email, 'owner', []],
        [viewer.name, viewer.email, 'viewer', [{ projectId: projectIds[0], role: 'member' }]],
      ],
    )
  })

  it('re-roles up to the granter’s own role, and never someone above it', async () => {
    const promoted = await change(admin, viewer, { role: 'admin' })
    assert.equal(promoted.statusCode, 200, promoted.body)
    assert.equal(promoted.json().role, 'admin')
    const toOwner = await change(admin, member, { role: 'owner' })
    assert.deepEqual([toOwner.statusCode, toOwner.json()], [403, { message: 'body/role: owner is above your own role (admin); nobody grants a role above their own' }])
    const selfToOwner = await change(admin, admin, { role: 'owner' })
    assert.equal(selfToOwner.statusCode, 403)
    const demoteOwner = await change(admin, owner, { role: 'viewer' })
    assert.deepEqual([demoteOwner.statusCode, demoteOwner.json()], [403, { message: 'This member is owner, above your own role (admin): only an owner or higher may change or remove them' }])
    const byMember = await change(member, viewer, { role: 'member' })
    assert.deepEqual([byMember.statusCode, byMember.json()], [403, { message: 'Not allowed: this needs the permission members:manage (docs/permissions.md)' }])
    assert.deepEqual(await roles(), { 'Ada Admin': 'admin', 'Mo Member': 'member', 'Olive Owner': 'owner', 'Vi Viewer': 'admin' })
  })

  it('sets and clears per-project roles, within the granter’s reach and the team', async () => {
    const set = await change(admin, member, { projectRoles: [{ projectId: projectIds[0], role: 'none' }, { projectId: projectIds[1], role: 'admin' }] })
    assert.equal(set.statusCode, 200, set.body)
    assert.deepEqual(set.json().projectRoles.toSorted((a: { role: string }, b: { role: string }) => a.role.localeCompare(b.role)), [
      { projectId: projectIds[1], role: 'admin' },
      { projectId: projectIds[0], role: 'none' },
    ])
    // What authorization reads: the first project is hidden from them, the second they administer.
    assert.deepEqual(await rolesOnProject(cp.db, projectIds[0], member.id), { teamId, teamRole: 'member', projectRole: 'none' })
    assert.deepEqual(await rolesOnProject(cp.db, projectIds[1], member.id), { teamId, teamRole: 'member', projectRole: 'admin' })

    const cleared = await change(admin, member, { projectRoles: [{ projectId: projectIds[0], role: null }] })
    assert.deepEqual(cleared.json().projectRoles, [{ projectId: projectIds[1], role: 'admin' }])
    const ownerOnProject = await change(admin, member, { projectRoles: [{ projectId: projectIds[0], role: 'owner' }] })
    assert.deepEqual([ownerOnProject.statusCode, ownerOnProject.json().message], [403, 'body/projectRoles/0/role: owner is above your own role (admin); nobody grants a role above their own'])
    const other = await seedTeam(cp.db, `Other ${team}`)
    const elsewhere = await change(admin, member, { projectRoles: [{ projectId: other.projectIds[0], role: 'member' }] })
    assert.deepEqual([elsewhere.statusCode, elsewhere.json().message], [400, `body/projectRoles/0/projectId: no project ${other.projectIds[0]} in this team`])
    const empty = await change(admin, member, {})
    assert.equal(empty.statusCode, 400)
    const bad = await change(admin, member, { role: 'root' })
    assert.deepEqual([bad.statusCode, bad.json().message], [400, 'body/role: must be equal to constant'])
  })

  it('never demotes, removes or lets go of the last owner', async () => {
    const demote = await change(owner, owner, { role: 'admin' })
    assert.deepEqual([demote.statusCode, demote.json()], [409, { message: 'The last owner cannot be demoted: make another member an owner first' }])
    const removed = await remove(owner, owner)
    assert.deepEqual([removed.statusCode, removed.json()], [409, { message: 'The last owner cannot be removed: make another member an owner first' }])
    const left = await leave(owner)
    assert.deepEqual([left.statusCode, left.json()], [409, { message: 'The last owner cannot leave the team: make another member an owner first' }])
    assert.equal(await teamRoleOf(cp.db, teamId, owner.id), 'owner')

    assert.equal((await change(owner, admin, { role: 'owner' })).statusCode, 200)
    const nowLeaves = await leave(owner)
    assert.equal(nowLeaves.statusCode, 204)
    assert.equal(await teamRoleOf(cp.db, teamId, owner.id), undefined)
    const lastAgain = await change(admin, admin, { role: 'member' })
    assert.equal(lastAgain.statusCode, 409, 'the admin made owner is now the last one')
  })

  it('of two owners demoted at once, one stays', async () => {
    const second = await signedInPerson(cp.db, teamId, 'owner', `Second Owner ${team}`)
    const [a, b] = await Promise.all([change(owner, second, { role: 'admin' }), change(second, owner, { role: 'admin' })])
    // The second to run finds one owner left (409), or, if the first had already finished, that it is no owner any more (403).
    assert.equal([a, b].filter((response) => response.statusCode === 200).length, 1, `${a.statusCode} ${a.body} / ${b.statusCode} ${b.body}`)
    assert.ok([a, b].every((response) => [200, 403, 409].includes(response.statusCode)))
    const { count } = await sql<{ count: string }>`select count(*) from team_members where team_id = ${teamId} and role = 'owner'`.execute(cp.db).then((r) => r.rows[0] as { count: string })
    assert.equal(Number(count), 1)
  })

  it('removes a member, and every session of theirs ends at once', async () => {
    const otherSession = await sessionCookieOf(cp.db, member.id)
    for (const cookie of [member.cookie, otherSession]) {
      assert.equal((await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie } })).statusCode, 200)
    }
    const removed = await remove(admin, member)
    assert.equal(removed.statusCode, 204)
    for (const cookie of [member.cookie, otherSession]) {
      const after = await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie } })
      assert.equal(after.statusCode, 401, 'the removed member is signed out')
    }
    assert.deepEqual(Object.keys(await roles()).toSorted(), ['Ada Admin', 'Olive Owner', 'Vi Viewer'])
    const again = await remove(admin, member)
    assert.deepEqual([again.statusCode, again.json()], [404, { message: 'No such member in this team' }])
    const adminRemovesOwner = await remove(admin, owner)
    assert.equal(adminRemovesOwner.statusCode, 403)
  })

  it("answers 404 for another team's members, and 401 without a session", async () => {
    const other = await seedTeam(cp.db, `Elsewhere ${team}`)
    const stranger = await signedInPerson(cp.db, other.teamId, 'owner', `Sam Stranger ${team}`)
    const list = await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie: stranger.cookie } })
    assert.deepEqual([list.statusCode, list.json()], [404, { message: 'Team not found' }])
    assert.equal((await change(stranger, member, { role: 'viewer' })).statusCode, 404)
    assert.equal((await cp.app.inject({ url: `/api/teams/${teamId}/members` })).statusCode, 401)
    const noCsrf = await cp.app.inject({ method: 'DELETE', url: `/api/teams/${teamId}/members/${viewer.id}`, headers: { cookie: owner.cookie } })
    assert.equal(noCsrf.statusCode, 403)
    assert.equal(await teamRoleOf(cp.db, teamId, viewer.id), 'viewer')
  })
})
