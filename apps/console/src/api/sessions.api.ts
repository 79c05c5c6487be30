import { keepPreviousData, useInfiniteQuery, useQueries, useQuery } from '@tanstack/react-query'
import { apiGet, apiPath } from './client.ts'
import type { SessionDetail, SessionPage, Trace } from './types.ts'

export function useSessionList(projectId: string, query: { from?: string | undefined; user?: string | undefined; includeTracewellCalls: boolean }) {
  return useInfiniteQuery({
    queryKey: ['sessions', projectId, query],
    queryFn: ({ pageParam }) => apiGet<SessionPage>(apiPath('/api/sessions', { project_id: projectId, from: query.from, user: query.user, include_tracewell_calls: query.includeTracewellCalls ? 'true' : undefined, limit: 100, cursor: pageParam })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  })
}

export function useSessionDetail(projectId: string, sessionId: string) {
  return useQuery({
    queryKey: ['session-detail', projectId, sessionId],
    queryFn: () => apiGet<SessionDetail>(apiPath(`/api/sessions/${encodeURIComponent(sessionId)}`, { project_id: projectId })),
  })
}

/** The full traces of a session, to read its conversation across them. */
export function useSessionTraces(projectId: string, traceIds: readonly string[]) {
  return useQueries({
    queries: traceIds.map((traceId) => ({
      queryKey: ['trace', projectId, traceId],
      queryFn: () => apiGet<Trace>(apiPath(`/api/traces/${encodeURIComponent(traceId)}`, { project_id: projectId })),
      staleTime: 30_000,
    })),
  })
}
