import { ConfigError, type ControlPlaneConfig } from '@tracewell/config'
import type { TeamRole } from '@tracewell/policy'

// Single sign-on as the settings configure it (docs/accounts.md#single-sign-on): the install's own
// OpenID Connect provider (OIDC_*), and what every provider needs (PUBLIC_URL, the address the
// provider sends people back to).

/** Who may join through a provider, and with which role. */
export interface JoinRules {
  /** Email domains whose people get an account at their first sign-in; `*` for any. */
  allowedDomains: readonly string[]
  defaultRole: TeamRole
  /** The claim (or SAML attribute) that says a person's role; a dotted path reaches into objects. */
  roleClaim: string | null
  /** Claim values → roles; empty: values that are role names stand for themselves. */
  roleMap: Readonly<Record<string, TeamRole>>
}

export interface OidcProviderSettings {
  issuer: string
  clientId: string
  clientSecret: string | null
  displayName: string
  scopes: string
}

export interface SsoOptions {
  /** PUBLIC_URL without a trailing slash; without it no sign-in can start (the provider would not know where to send people back). */
  publicUrl: string | undefined
  /** OIDC_ISSUER and its settings; null when unset. */
  installOidc: (OidcProviderSettings & JoinRules) | null
}

type SsoSettings = Pick<
  ControlPlaneConfig,
  'PUBLIC_URL' | 'OIDC_ISSUER' | 'OIDC_CLIENT_ID' | 'OIDC_CLIENT_SECRET' | 'OIDC_DISPLAY_NAME' | 'OIDC_SCOPES' | 'OIDC_ALLOWED_DOMAINS' | 'OIDC_DEFAULT_ROLE' | 'OIDC_ROLE_CLAIM' | 'OIDC_ROLE_MAP'
>

/** The settings' single sign-on; throws a ConfigError (one line) for OIDC_ISSUER without what it needs. */
export function ssoOptionsOf(config: SsoSettings): SsoOptions {
  const publicUrl = config.PUBLIC_URL?.replace(/\/+$/, '')
  if (config.OIDC_ISSUER === undefined) return { publicUrl, installOidc: null }
  if (config.OIDC_CLIENT_ID === undefined) throw new ConfigError('OIDC_CLIENT_ID is required with OIDC_ISSUER: the client id Tracewell is registered with at the provider')
  if (publicUrl === undefined) throw new ConfigError('PUBLIC_URL is required with OIDC_ISSUER: the provider sends people back to <PUBLIC_URL>/api/auth/oidc/callback')
  return {
    publicUrl,
    installOidc: {
      issuer: config.OIDC_ISSUER,
      clientId: config.OIDC_CLIENT_ID,
      clientSecret: config.OIDC_CLIENT_SECRET ?? null,
      displayName: config.OIDC_DISPLAY_NAME,
      scopes: config.OIDC_SCOPES,
      allowedDomains: domainList(config.OIDC_ALLOWED_DOMAINS),
      defaultRole: config.OIDC_DEFAULT_ROLE,
      roleClaim: config.OIDC_ROLE_CLAIM ?? null,
      roleMap: roleMapOf(config.OIDC_ROLE_MAP),
    },
  }
}

/** `acme.com, Acme.co.uk` → ['acme.com', 'acme.co.uk']; `*` stays `*`. */
export function domainList(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((domain) => domain.trim().toLowerCase()).filter((domain) => domain !== '')
}

/** `tracewell-admins=admin,engineering=member` → { 'tracewell-admins': 'admin', engineering: 'member' }. */
function roleMapOf(raw: string | undefined): Record<string, TeamRole> {
  if (raw === undefined) return {}
  return Object.fromEntries(raw.split(',').map((pair) => {
    const at = pair.lastIndexOf('=')
    return [pair.slice(0, at).trim(), pair.slice(at + 1).trim() as TeamRole]
  }))
}
