import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'

// Single sign-on (docs/accounts.md#single-sign-on): the providers the sign-in page offers, and a
// team's own settings. A client secret is sent, never read back.

export interface SsoProvider {
  id: string
  protocol: 'oidc' | 'saml'
  teamId: string | null
  displayName: string
  /** Where the button goes: a full-page navigation to the provider, not a fetch. */
  loginUrl: string
}

export function useSsoProviders() {
  return useQuery({
    queryKey: ['sso-providers'],
    queryFn: () => apiGet<{ providers: SsoProvider[] }>('/api/auth/sso/providers'),
    select: (answer) => answer.providers,
    staleTime: 60_000,
  })
}

export type TeamRole = 'viewer' | 'member' | 'admin' | 'owner'

export interface SsoJoinRules {
  allowedDomains: string[]
  defaultRole: TeamRole
  roleClaim: string | null
  roleMap: Record<string, TeamRole>
  passwordSignIn: boolean
}

export interface OidcSettings {
  issuer: string
  clientId: string
  displayName: string
}

export interface SamlSettings {
  entryPoint: string
  idpIssuer: string | null
  idpCertificate: string
  displayName: string
}

export interface TeamSsoSettings extends SsoJoinRules {
  oidc: (OidcSettings & { clientSecretSet: boolean }) | null
  saml: SamlSettings | null
  serviceProvider: { oidcRedirectUri: string; samlMetadataUrl: string; samlAcsUrl: string } | null
  updatedAt: string | null
  mayChange: boolean
}

export interface TeamSsoChange extends SsoJoinRules {
  /** clientSecret omitted: the stored one is kept; null: a public client. */
  oidc: (OidcSettings & { clientSecret?: string | null }) | null
  saml: SamlSettings | null
}

const ssoPath = (teamId: string) => `/api/teams/${encodeURIComponent(teamId)}/sso`

export function useTeamSso(teamId: string) {
  return useQuery({ queryKey: ['team-sso', teamId], queryFn: () => apiGet<TeamSsoSettings>(ssoPath(teamId)) })
}

export function useSaveTeamSso(teamId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (change: TeamSsoChange) => apiRequest<TeamSsoSettings>('PUT', ssoPath(teamId), change),
    onSuccess: (saved) => {
      client.setQueryData(['team-sso', teamId], saved)
      void client.invalidateQueries({ queryKey: ['sso-providers'] })
    },
  })
}
