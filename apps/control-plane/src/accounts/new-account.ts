import { hashPassword, passwordProblem } from '@tracewell/auth'
import { createUser, putTeamMember, setProjectRole, type Executor, type ProjectRoleName, type TeamRoleName, type UserDto } from '@tracewell/db'
import { BadRequestError, ConflictError } from '@tracewell/http'

// How a person gets a password account and a place in a team: the setup link, INIT_USER_EMAIL, an
// invitation and an open sign-up all come through here, so the password rule and the
// one-account-per-email rule are applied alike.

export interface NewPasswordAccount {
  email: string
  name: string
  password: string
  /** Only when the link that led here went to that address (a mailed invitation, a reset). */
  emailVerified: boolean
}

/** Why a new password is refused, as the 400 that names the field; undefined when it is fine. */
export function refusedPassword(password: string, context: { email?: string; name?: string }, field = 'body/password'): Error | undefined {
  const problem = passwordProblem(password, context)
  return problem === undefined ? undefined : new BadRequestError(`${field}: ${problem}`)
}

/** Makes the account; 400 for a password below the rule, 409 when the email (in any case) has one. */
export async function createPasswordAccount(db: Executor, account: NewPasswordAccount): Promise<UserDto> {
  const refused = refusedPassword(account.password, { email: account.email, name: account.name })
  if (refused) throw refused
  const user = await createUser(db, { email: account.email, name: account.name.trim(), passwordHash: await hashPassword(account.password), emailVerified: account.emailVerified })
  if (user === undefined) throw new ConflictError(`body/email: an account with ${account.email} exists already; sign in (or reset its password) instead`)
  return user
}

/** Puts a person in a team with their role and per-project roles. */
export async function joinTeam(db: Executor, teamId: string, userId: string, role: TeamRoleName, projectRoles: readonly { projectId: string; role: ProjectRoleName }[] = []): Promise<void> {
  await putTeamMember(db, teamId, userId, role)
  for (const grant of projectRoles) await setProjectRole(db, grant.projectId, userId, grant.role)
}
