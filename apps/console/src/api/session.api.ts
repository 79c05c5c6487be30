import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { ApiError, apiGet, apiRequest } from './client.ts'
import type { Session } from './types.ts'

export const sessionKey = ['session'] as const

/** Who is signed in; null when nobody is (a 401 is an answer here, not an error). */
export const sessionQuery = queryOptions({
  queryKey: sessionKey,
  queryFn: async (): Promise<Session | null> => {
    try {
      return await apiGet<Session>('/api/session')
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return null
      throw error
    }
  },
  staleTime: 60_000,
})

export function useSession() {
  return useQuery(sessionQuery)
}

export function useSignIn() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (apiKey: string) => apiRequest<Session>('POST', '/api/session', { apiKey }),
    onSuccess: (session) => {
      forgetEverythingButTheSession(client)
      client.setQueryData(sessionKey, session)
    },
  })
}

export function useSignOut() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: () => apiRequest<void>('DELETE', '/api/session'),
    onSuccess: () => {
      forgetEverythingButTheSession(client)
      client.setQueryData(sessionKey, null)
    },
  })
}

/**
 * Another team may sign in next: nothing cached for this one may show. The session query itself
 * stays (its observers would not see a query made anew), and is set by the caller.
 */
function forgetEverythingButTheSession(client: QueryClient): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] })
}
