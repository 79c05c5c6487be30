import { countTeamOwnersForUpdate, createUser, findSsoIdentityUser, findUserCredentialsByEmail, linkSsoIdentity, markUserEmailVerified, membershipsOf, putTeamMember, teamRoleOf, type Db, type Executor } from '@tracewell/db'
import { ForbiddenError } from '@tracewell/http'
import { atLeast, isTeamRole, type TeamRole } from '@tracewell/policy'
import type { JoinRules } from './sso-options.ts'

// Which account a person who proved who they are at an identity provider signs in as, and whether
// they may (docs/accounts.md#single-sign-on). The same rules for OIDC and SAML, for the install's
// own provider and a team's:
// - a subject seen before signs in as the account it was linked to;
// - otherwise the provider must vouch for the email (OIDC's email_verified): an unverified email
//   neither makes an account nor takes one over;
// - an existing account with that email is linked. A team's provider is configured by that team's
//   owner, who could make it assert anyone's email or subject: it only ever signs in an account
//   that belongs to its team and to no other, so it can never reach into another team's people;
// - else an account is made if the email's domain is allowed, joining the provider's team with the
//   role the role claim maps to, else the default role.
// With a role claim, the mapped role is applied again at every sign-in (the provider is where
// roles are managed), except that the team's last owner is never demoted.

export interface ProviderAccountRules extends JoinRules {
  /** `oidc` (the install's own), or a team's: teamProviderKey (sso-providers.ts). */
  provider: string
  /** The team people join through it: the team's own, or for the install's provider the default team. */
  teamId: string
  /** A team's own provider may only link accounts of its team. */
  ownedByTeam: boolean
}

/** What a provider said about the person, its signature and audience already checked. */
export interface AssertedIdentity {
  subject: string
  email: string | undefined
  emailVerified: boolean
  name: string | undefined
  /** Every claim or attribute, for the role claim. */
  claims: Record<string, unknown>
}

export const unverifiedEmailMessage = 'Single sign-on refused: the identity provider did not say that your email address is verified, and an unverified email neither makes an account nor signs in to one'

/** The account to sign in; throws a ForbiddenError naming the reason it may not. */
export async function accountOfIdentity(db: Db, rules: ProviderAccountRules, identity: AssertedIdentity): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const mappedRole = roleFromClaims(rules, identity.claims)
    const known = await findSsoIdentityUser(trx, rules.provider, identity.subject)
    if (known !== undefined) {
      if (rules.ownedByTeam) await requireOnlyThisTeam(trx, rules.teamId, known, identity.email ?? identity.subject)
      await linkSsoIdentity(trx, rules.provider, identity.subject, known)
      if (mappedRole !== undefined) await applyMappedRole(trx, rules.teamId, known, mappedRole)
      return known
    }
    const email = identity.email?.trim()
    if (email === undefined || email === '' || !email.includes('@')) throw new ForbiddenError('Single sign-on refused: the identity provider sent no email address (ask for the email scope or attribute)')
    if (!identity.emailVerified) throw new ForbiddenError(unverifiedEmailMessage)
    const existing = await findUserCredentialsByEmail(trx, email)
    if (existing !== undefined) {
      if (rules.ownedByTeam) await requireOnlyThisTeam(trx, rules.teamId, existing.id, email)
      await linkSsoIdentity(trx, rules.provider, identity.subject, existing.id)
      if (!existing.emailVerified) await markUserEmailVerified(trx, existing.id)
      const role = await teamRoleOf(trx, rules.teamId, existing.id)
      if (role === undefined && domainAllowed(rules.allowedDomains, email)) await putTeamMember(trx, rules.teamId, existing.id, mappedRole ?? rules.defaultRole)
      else if (role !== undefined && mappedRole !== undefined) await applyMappedRole(trx, rules.teamId, existing.id, mappedRole)
      return existing.id
    }
    if (!domainAllowed(rules.allowedDomains, email)) {
      throw new ForbiddenError(`Single sign-on refused: people of the domain ${domainOf(email)} do not get an account here (allowed: ${rules.allowedDomains.length === 0 ? 'none, only existing accounts' : rules.allowedDomains.join(', ')})`)
    }
    const user = await createUser(trx, { email, name: displayName(identity, email), passwordHash: null, emailVerified: true })
    // The email was free a moment ago; another sign-in made it since: the person tries again and is linked.
    if (user === undefined) throw new ForbiddenError('Single sign-on refused: an account with this email was made at the same moment; sign in again')
    await linkSsoIdentity(trx, rules.provider, identity.subject, user.id)
    await putTeamMember(trx, rules.teamId, user.id, mappedRole ?? rules.defaultRole)
    return user.id
  })
}

/**
 * A team's provider signs in only accounts that belong to its team and to no other, at every
 * sign-in: its owner controls what it asserts, and must not reach another team through a person
 * who is in both (they sign in with their password or the install's provider).
 */
async function requireOnlyThisTeam(db: Executor, teamId: string, userId: string, who: string): Promise<void> {
  const teams = (await membershipsOf(db, userId)).map((membership) => membership.teamId)
  if (teams.length === 0 || teams.some((other) => other !== teamId)) {
    throw new ForbiddenError(`Single sign-on refused: the account of ${who} is not (only) a member of this team, and a team's identity provider signs in its own team's members alone; sign in with that account's password`)
  }
}

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase()

function domainAllowed(allowed: readonly string[], email: string): boolean {
  return allowed.includes('*') || allowed.includes(domainOf(email))
}

function displayName(identity: AssertedIdentity, email: string): string {
  const name = identity.name?.trim()
  return (name === undefined || name === '' ? email.slice(0, email.lastIndexOf('@')) : name).slice(0, 200)
}

/** The highest role the role claim's values map to; undefined without a claim or a mapped value. */
export function roleFromClaims(rules: JoinRules, claims: Record<string, unknown>): TeamRole | undefined {
  if (rules.roleClaim === null) return undefined
  let value: unknown = claims[rules.roleClaim]
  // A dotted path (realm_access.roles) reaches into objects, unless a claim has the dotted name itself.
  if (value === undefined) value = rules.roleClaim.split('.').reduce<unknown>((at, key) => (typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined), claims)
  const values = (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string')
  const mapped = values.map((item) => (Object.keys(rules.roleMap).length === 0 ? (isTeamRole(item) ? item : undefined) : rules.roleMap[item]))
  return mapped.reduce<TeamRole | undefined>((best, role) => (role !== undefined && (best === undefined || atLeast(role, best)) ? role : best), undefined)
}

/** Sets a member's role to the mapped one; the last owner keeps theirs (a team always has an owner). */
async function applyMappedRole(db: Executor, teamId: string, userId: string, role: TeamRole): Promise<void> {
  const current = await teamRoleOf(db, teamId, userId)
  if (current === undefined || current === role) return
  if (current === 'owner' && (await countTeamOwnersForUpdate(db, teamId)) <= 1) return
  await putTeamMember(db, teamId, userId, role)
}
