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
    onSuccess: async (session) => {
      await settleSession(client, session)
    },
  })
}

export function useSignOut() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: () => apiRequest<void>('DELETE', '/api/session'),
    onSuccess: async () => {
      await settleSession(client, null)
    },
  })
}

/**
 * The session as the sign-in or sign-out just made it. A fetch of the session still under way
 * was sent with the cookie as it was before (a 401 of a signed-out page asks for the session
 * again): it is cancelled first, or its answer, arriving after, would undo the sign-in (seen in
 * the browser tests on a loaded machine: signed in, then back on the sign-in page).
 */
async function settleSession(client: QueryClient, session: Session | null): Promise<void> {
  await client.cancelQueries({ queryKey: sessionKey })
  forgetEverythingButTheSession(client)
  client.setQueryData(sessionKey, session)
}

/**
 * Another team may sign in next: nothing cached for this one may show. The session query itself
 * stays (its observers would not see a query made anew), and is set by the caller.
 */
function forgetEverythingButTheSession(client: QueryClient): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] })
}
