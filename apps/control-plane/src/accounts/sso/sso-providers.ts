import { findOldestTeam, findTeamSsoSettings, ssoClientSecretContext, type Db } from '@tracewell/db'
import { NotFoundError, ServiceUnavailableError } from '@tracewell/http'
import type { ProviderAccountRules } from './sso-accounts.ts'
import type { OidcProviderSettings, SsoOptions } from './sso-options.ts'

// The OIDC provider a sign-in goes to: the install's own (OIDC_ISSUER) without a team, else the
// named team's; with the rules its people join by.

export interface ResolvedOidcProvider {
  settings: Omit<OidcProviderSettings, 'scopes'> & { scopes: string }
  rules: ProviderAccountRules
}

/**
 * A team provider's identities are its team's and its issuer's: an owner who points the team at
 * another IdP does not inherit the subjects the first one signed in.
 */
export const teamProviderKey = (protocol: 'oidc' | 'saml', teamId: string, issuer: string) => `${protocol}:${teamId}:${issuer}`

export const notConfiguredMessage = (what: string) => `Single sign-on is not configured: ${what}`

export async function resolveOidcProvider(db: Db, sso: SsoOptions, teamId: string | null, openSecret: (sealed: string, context: string) => string): Promise<ResolvedOidcProvider> {
  if (teamId === null) {
    const own = sso.installOidc
    if (own === null) throw new NotFoundError(notConfiguredMessage('OIDC_ISSUER is unset (name a team with team_id for a team’s own provider)'))
    const team = await findOldestTeam(db)
    if (team === undefined) throw new ServiceUnavailableError('No team exists yet: start Tracewell once so that it makes the default team', 30)
    return { settings: own, rules: { ...own, provider: 'oidc', teamId: team.id, ownedByTeam: false } }
  }
  const settings = await findTeamSsoSettings(db, teamId)
  const oidc = settings?.oidc
  if (settings === undefined || oidc === null || oidc === undefined) throw new NotFoundError(notConfiguredMessage('this team has no OpenID Connect provider'))
  const clientSecret = oidc.clientSecretSealed === null ? null : openSecret(oidc.clientSecretSealed, ssoClientSecretContext(teamId))
  return {
    settings: { issuer: oidc.issuer, clientId: oidc.clientId, clientSecret, displayName: oidc.displayName, scopes: 'openid email profile' },
    rules: { provider: teamProviderKey('oidc', teamId, oidc.issuer), teamId, ownedByTeam: true, allowedDomains: settings.allowedDomains, defaultRole: settings.defaultRole, roleClaim: settings.roleClaim, roleMap: settings.roleMap },
  }
}
