import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'
import type { Erasure } from '@tracewell/api-schemas'

/** GET /api/projects/:projectId/erasures/:id (and the list's items). */
export type { Erasure }

export type ErasureSubject = { userId: string } | { sessionId: string } | { traceIds: string[] }

const erasuresPath = (projectId: string) => `/api/projects/${encodeURIComponent(projectId)}/erasures`

/** A project's erasure requests, looked at again every 2 s while one is under way, so its progress shows. */
export function useErasures(projectId: string) {
  return useQuery({
    queryKey: ['erasures', projectId],
    queryFn: () => apiGet<{ erasures: Erasure[] }>(erasuresPath(projectId)),
    select: (data) => data.erasures,
    refetchInterval: (query) => (query.state.data?.erasures.some((erasure) => erasure.status !== 'completed') ? 2_000 : false),
  })
}

export function useRequestErasure(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (subject: ErasureSubject) => apiRequest<{ id: string; status: Erasure['status'] }>('POST', erasuresPath(projectId), subject),
    onSuccess: () => client.invalidateQueries({ queryKey: ['erasures', projectId] }),
  })
}
