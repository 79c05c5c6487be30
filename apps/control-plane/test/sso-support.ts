import { createHash, randomBytes } from 'node:crypto'
import { createUser, createUserSession, putTeamMember, type Db, type TeamRoleName } from '@tracewell/db'

// People for the single sign-on tests: an account with a role on a team, and a live session of
// theirs as the cookie a browser would send (the sign-in routes are another part's; the session
// rows are what app.userSessions reads).

export interface TestPerson {
  userId: string
  /** `tw_sid=…`, for inject's cookie header. */
  cookie: string
}

export async function personWithRole(db: Db, teamId: string, email: string, role: TeamRoleName): Promise<TestPerson> {
  const user = await createUser(db, { email, name: email.split('@')[0] ?? email, passwordHash: null, emailVerified: true })
  if (user === undefined) throw new Error(`${email} exists`)
  await putTeamMember(db, teamId, user.id, role)
  const token = randomBytes(32).toString('base64url')
  await createUserSession(db, { tokenHash: createHash('sha256').update(token).digest('hex'), userId: user.id, expiresAt: new Date(Date.now() + 3_600_000), ip: null, userAgent: null })
  return { userId: user.id, cookie: `tw_sid=${token}` }
}

/** Headers of a signed-in person's change: the cookie and the console's CSRF header. */
export const asPerson = (person: TestPerson) => ({ cookie: person.cookie, 'x-tracewell-csrf': '1' })
