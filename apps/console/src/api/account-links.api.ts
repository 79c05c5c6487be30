import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'
import { sessionKey } from './session.api.ts'
import type { Static } from '@sinclair/typebox'
import type { AcceptBodySchema, InvitationPreviewSchema, Joined } from '@tracewell/api-schemas'

// The pages a link opens, signed out or in (docs/accounts.md): an invitation, the setup link, a
// password reset. Each link's state is read first, so the page can say at once that it was used or
// has expired instead of after the form is filled.

export type { Joined }
export type InvitationPreview = Static<typeof InvitationPreviewSchema>

const linkQuery = { retry: false, staleTime: Infinity, refetchOnMount: false } as const
const tokenPath = (token: string) => encodeURIComponent(token)

export function useInvitationPreview(token: string) {
  return useQuery({ ...linkQuery, queryKey: ['invitation-link', token], queryFn: () => apiGet<InvitationPreview>(`/api/invitations/${tokenPath(token)}`) })
}

/** Joining or making an account signs in: the session is asked for again. */
function useJoin<Body>(path: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: Body) => apiRequest<Joined>('POST', path, body),
    onSuccess: () => client.invalidateQueries({ queryKey: sessionKey }),
  })
}

export function useAcceptInvitation(token: string) {
  return useJoin<Static<typeof AcceptBodySchema>>(`/api/invitations/${tokenPath(token)}/accept`)
}

export function useSetupLink(token: string) {
  return useQuery({ ...linkQuery, queryKey: ['setup-link', token], queryFn: () => apiGet<{ teamName: string }>(`/api/setup/${tokenPath(token)}`) })
}

export function useMakeOwner(token: string) {
  return useJoin<{ email: string; name: string; password: string }>(`/api/setup/${tokenPath(token)}`)
}

export function useAskPasswordReset() {
  return useMutation({ mutationFn: (email: string) => apiRequest<{ message: string }>('POST', '/api/auth/password-reset', { email }) })
}

export function usePasswordResetLink(token: string) {
  return useQuery({ ...linkQuery, queryKey: ['password-reset-link', token], queryFn: () => apiGet<{ email: string; expiresAt: string }>(`/api/auth/password-reset/${tokenPath(token)}`) })
}

export function useResetPassword(token: string) {
  return useMutation({ mutationFn: (password: string) => apiRequest<void>('POST', `/api/auth/password-reset/${tokenPath(token)}`, { password }) })
}
