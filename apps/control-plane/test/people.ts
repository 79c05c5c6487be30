import { createHash, randomBytes } from 'node:crypto'
import { createUser, createUserSession, putTeamMember, setProjectRole, type Db, type ProjectRoleName, type TeamRoleName } from '@tracewell/db'

export interface Person {
  userId: string
  name: string
  /** Headers of a request from this person's signed-in console (cookie and CSRF header). */
  headers: Record<string, string>
}

let serial = 0

/**
 * A person in a team with a live session, straight through the repositories (the sign-in routes
 * are tested on their own): what tests of other routes need to act as someone.
 */
export async function personIn(db: Db, teamId: string, role: TeamRoleName, options: { name?: string; projectRoles?: Record<string, ProjectRoleName> } = {}): Promise<Person> {
  const name = options.name ?? `Person ${++serial}`
  const user = await createUser(db, { email: `${name.toLowerCase().replace(/\W+/g, '.')}.${randomBytes(4).toString('hex')}@example.com`, name, passwordHash: null, emailVerified: true })
  if (user === undefined) throw new Error('email taken')
  await putTeamMember(db, teamId, user.id, role)
  for (const [projectId, projectRole] of Object.entries(options.projectRoles ?? {})) await setProjectRole(db, projectId, user.id, projectRole)
  const token = randomBytes(32).toString('base64url')
  await createUserSession(db, { tokenHash: createHash('sha256').update(token).digest('hex'), userId: user.id, expiresAt: new Date(Date.now() + 3_600_000), ip: null, userAgent: null })
  return { userId: user.id, name, headers: { cookie: `tw_sid=${token}`, 'x-tracewell-csrf': '1' } }
}
