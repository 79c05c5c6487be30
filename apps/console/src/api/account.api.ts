import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'
import { sessionKey } from './session.api.ts'
import type { Me, OwnSession } from './types.ts'

// A signed-in person's own account: their name, password and sessions (docs/accounts.md#your-account).

const sessionsKey = ['own-sessions'] as const

export function useRename() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (name: string) => apiRequest<Me>('PATCH', '/api/me', { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: sessionKey }),
  })
}

export function useChangePassword() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: { currentPassword: string; newPassword: string }) => apiRequest<void>('PUT', '/api/me/password', body),
    // Every other session ended: the list shows only this one now.
    onSuccess: () => client.invalidateQueries({ queryKey: sessionsKey }),
  })
}

export function useOwnSessions() {
  return useQuery({ queryKey: sessionsKey, queryFn: () => apiGet<{ sessions: OwnSession[] }>('/api/me/sessions'), select: (data) => data.sessions })
}

export function useEndSession() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (sessionId: string) => apiRequest<void>('DELETE', `/api/me/sessions/${encodeURIComponent(sessionId)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: sessionsKey }),
  })
}
