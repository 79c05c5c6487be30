import assert from 'node:assert/strict'
import { hashPassword, newSecretToken } from '@tracewell/auth'
import { createProject, createTeam, createUserSession, createUser, putTeamMember, type Db, type TeamRoleName } from '@tracewell/db'
import type { LightMyRequestResponse } from 'fastify'

// People for the accounts tests, straight through the repositories: a person with a role on a
// team, signed in by a session row of their own (the cookie the browser would hold).

export const csrf = { 'x-tracewell-csrf': '1' }
export const testPassword = 'correct horse battery staple'

export interface Person {
  id: string
  email: string
  name: string
  /** The Cookie header of a live session of theirs. */
  cookie: string
}

let hashed: Promise<string> | undefined

/** A person signed in, a member of `teamId` with `role` (no team when null). */
export async function signedInPerson(db: Db, teamId: string | null, role: TeamRoleName, name: string): Promise<Person> {
  hashed ??= hashPassword(testPassword)
  const email = `${name.toLowerCase().replaceAll(' ', '.')}@example.com`
  const user = await createUser(db, { email, name, passwordHash: await hashed, emailVerified: true })
  assert.ok(user, `${email} is new`)
  if (teamId !== null) await putTeamMember(db, teamId, user.id, role)
  return { id: user.id, email, name, cookie: await sessionCookieOf(db, user.id) }
}

/** A new live session of `userId`, as its Cookie header. */
export async function sessionCookieOf(db: Db, userId: string): Promise<string> {
  const { token, tokenHash } = newSecretToken()
  await createUserSession(db, { tokenHash, userId, expiresAt: new Date(Date.now() + 3_600_000), ip: null, userAgent: null })
  return `tw_sid=${token}`
}

/** A team with two projects. */
export async function seedTeam(db: Db, name: string): Promise<{ teamId: string; projectIds: [string, string] }> {
  const team = await createTeam(db, { name })
  const first = await createProject(db, { teamId: team.id, name: `${name} one` })
  const second = await createProject(db, { teamId: team.id, name: `${name} two` })
  return { teamId: team.id, projectIds: [first.id, second.id] }
}

/** The session cookie an answer set, as the browser would send it back. */
export function sessionCookieSet(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((candidate) => candidate.name === 'tw_sid')
  assert.ok(cookie, `a tw_sid cookie is set (status ${response.statusCode}: ${response.body})`)
  return `tw_sid=${cookie.value}`
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
