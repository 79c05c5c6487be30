import assert from 'node:assert/strict'
import { hashPassword, newSecretToken } from '@tracewell/auth'
import { createProject, createTeam, createUser, createUserSession, putTeamMember, setProjectRole, type Db } from '@tracewell/db'
import type { App } from '@tracewell/http'
import type { ProjectRole, TeamRole } from '@tracewell/policy'
import type { LightMyRequestResponse } from 'fastify'

// People for the control plane's tests, made through the repositories (as an invitation or a
// sign-in through a provider would make them), each holding a real session: either a session row
// of their own (`withSession`) or the cookie the real sign-in route set (`signIn`).

export const testPassword = 'correct horse battery staple'
/** The header the console sends with every change (the CSRF check). */
export const csrf = { 'x-tracewell-csrf': '1' }

export interface Person {
  id: string
  email: string
  name: string
}

/** A person with a live session: `cookie` is the Cookie header their browser would send. */
export interface SignedInPerson extends Person {
  cookie: string
}

let passwordHash: Promise<string> | undefined

/**
 * A person with `role` on the team (no team when null) and, optionally, their own roles on some
 * projects; with the test password, or none (as single sign-on makes them) when `password` is false.
 */
export async function addPerson(
  db: Db,
  teamId: string | null,
  role: TeamRole,
  email: string,
  options: { name?: string; projectRoles?: Record<string, ProjectRole>; password?: boolean } = {},
): Promise<Person> {
  passwordHash ??= hashPassword(testPassword)
  const name = options.name ?? email.split('@')[0] ?? email
  const user = await createUser(db, { email, name, passwordHash: options.password === false ? null : await passwordHash, emailVerified: true })
  assert.ok(user, `${email} is new`)
  if (teamId !== null) await putTeamMember(db, teamId, user.id, role)
  for (const [projectId, projectRole] of Object.entries(options.projectRoles ?? {})) await setProjectRole(db, projectId, user.id, projectRole)
  return { id: user.id, email: user.email, name: user.name }
}

/** `addPerson`, signed in by a session row of their own. */
export async function withSession(person: Promise<Person>, db: Db): Promise<SignedInPerson> {
  const made = await person
  return { ...made, cookie: await sessionCookieOf(db, made.id) }
}

/** A person named `name` (email name@example.com), a member of `teamId` with `role`, signed in. */
export async function signedInPerson(db: Db, teamId: string | null, role: TeamRole, name: string): Promise<SignedInPerson> {
  return withSession(addPerson(db, teamId, role, `${name.toLowerCase().replaceAll(' ', '.')}@example.com`, { name }), db)
}

/** A new live session of `userId`, as its Cookie header. */
export async function sessionCookieOf(db: Db, userId: string): Promise<string> {
  const { token, tokenHash } = newSecretToken()
  await createUserSession(db, { tokenHash, userId, expiresAt: new Date(Date.now() + 3_600_000), ip: null, userAgent: null })
  return `tw_sid=${token}`
}

/** Headers of a signed-in person's change: their cookie and the console's CSRF header. */
export const asPerson = (person: { cookie: string }) => ({ cookie: person.cookie, ...csrf })

/** Signs `email` in through POST /api/auth/sign-in; the cookie header a browser would send back. */
export async function signIn(app: App, email: string, password = testPassword): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/sign-in', headers: csrf, payload: { email, password } })
  assert.equal(response.statusCode, 200, response.body)
  return sessionCookieSet(response)
}

/** The session cookie an answer set, as the browser would send it back. */
export function sessionCookieSet(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((candidate) => candidate.name === 'tw_sid')
  assert.ok(cookie, `a tw_sid cookie is set (status ${response.statusCode}: ${response.body})`)
  return `tw_sid=${cookie.value}`
}

/** A team with two projects. */
export async function seedTeam(db: Db, name: string): Promise<{ teamId: string; projectIds: [string, string] }> {
  const team = await createTeam(db, { name })
  const first = await createProject(db, { teamId: team.id, name: `${name} one` })
  const second = await createProject(db, { teamId: team.id, name: `${name} two` })
  return { teamId: team.id, projectIds: [first.id, second.id] }
}

/** What `read` returns once `done` says so: a mail sent after the answer arrives a moment later. */
export async function eventually<T>(read: () => T, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const value = read()
    if (done(value)) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.fail(`${what} did not happen within 10 s`)
}

/** A received mail's raw text with quoted-printable undone (nodemailer wraps long lines so). */
export function mailText(data: string): string {
  return data.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
}
