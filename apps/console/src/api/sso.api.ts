import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'
import type { Static } from '@sinclair/typebox'
import type { PutTeamSsoSettings, SsoProviderSchema, TeamSsoSettingsBody } from '@tracewell/api-schemas'

// Single sign-on (docs/accounts.md#single-sign-on): the providers the sign-in page offers, and a
// team's own settings. A client secret is sent, never read back.

export type SsoProvider = Static<typeof SsoProviderSchema>

export function useSsoProviders() {
  return useQuery({
    queryKey: ['sso-providers'],
    queryFn: () => apiGet<{ providers: SsoProvider[] }>('/api/auth/sso/providers'),
    select: (answer) => answer.providers,
    staleTime: 60_000,
  })
}

export type TeamSsoSettings = TeamSsoSettingsBody
/** oidc.clientSecret omitted: the stored one is kept; null: a public client. */
export type TeamSsoChange = PutTeamSsoSettings
export type TeamRole = TeamSsoSettings['defaultRole']

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
