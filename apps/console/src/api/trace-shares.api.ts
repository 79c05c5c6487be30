import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { Trace } from './types.ts'
import type { Static } from '@sinclair/typebox'
import type { TraceShareSchema } from '@tracewell/api-schemas'

export type TraceShare = Static<typeof TraceShareSchema>

const sharesKey = (projectId: string, traceId: string) => ['trace-shares', projectId, traceId]

export function useTraceShares(projectId: string, traceId: string, enabled: boolean) {
  return useQuery({
    queryKey: sharesKey(projectId, traceId),
    queryFn: () => apiGet<{ shares: TraceShare[] }>(apiPath(`/api/traces/${traceId}/shares`, { project_id: projectId })),
    select: (answer) => answer.shares,
    enabled,
  })
}

export function useShareTrace(projectId: string, traceId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (expiresAt: string | undefined) =>
      apiRequest<TraceShare & { url: string; token: string }>('POST', apiPath(`/api/traces/${traceId}/share`, { project_id: projectId }), expiresAt === undefined ? {} : { expiresAt }),
    onSuccess: () => void client.invalidateQueries({ queryKey: sharesKey(projectId, traceId) }),
  })
}

export function useRevokeShare(projectId: string, traceId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (shareId: string) => apiRequest<void>('DELETE', apiPath(`/api/trace-shares/${shareId}`, { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: sharesKey(projectId, traceId) }),
  })
}

/** The one trace a share link opens; the page asks for nothing else. */
export function useSharedTrace(token: string) {
  return useQuery({ queryKey: ['shared-trace', token], queryFn: () => apiGet<Trace>(`/api/shared/traces/${encodeURIComponent(token)}`), retry: false, structuralSharing: false })
}
