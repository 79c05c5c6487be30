import assert from 'node:assert/strict'
import { hashPassword } from '@tracewell/auth'
import { createUser, putTeamMember, setProjectRole, type Db } from '@tracewell/db'
import type { App } from '@tracewell/http'
import type { ProjectRole, TeamRole } from '@tracewell/policy'

// People for tests: made through the repositories (as invitations would), signed in through the
// real sign-in route, so every test holds a real session cookie.

export const testPassword = 'correct horse battery staple'

let passwordHash: Promise<string> | undefined

export interface Person {
  id: string
  email: string
  name: string
}

/** A person with `role` on the team (and, optionally, their own roles on some projects). */
export async function addPerson(db: Db, teamId: string, role: TeamRole, email: string, projectRoles: Record<string, ProjectRole> = {}): Promise<Person> {
  passwordHash ??= hashPassword(testPassword)
  const user = await createUser(db, { email, name: email.split('@')[0] ?? email, passwordHash: await passwordHash, emailVerified: true })
  assert.ok(user, `${email} is new`)
  await putTeamMember(db, teamId, user.id, role)
  for (const [projectId, projectRole] of Object.entries(projectRoles)) await setProjectRole(db, projectId, user.id, projectRole)
  return { id: user.id, email: user.email, name: user.name }
}

export const csrf = { 'x-tracewell-csrf': '1' }

/** Signs `email` in through POST /api/auth/sign-in; the cookie header a browser would send back. */
export async function signIn(app: App, email: string, password = testPassword): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/sign-in', headers: csrf, payload: { email, password } })
  assert.equal(response.statusCode, 200, response.body)
  const cookie = response.cookies.find((candidate) => candidate.name === 'tw_sid')
  assert.ok(cookie, 'a tw_sid cookie is set')
  return `tw_sid=${cookie.value}`
}
