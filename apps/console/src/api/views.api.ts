import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { Static } from '@sinclair/typebox'
import type { ViewSchema } from '@tracewell/api-schemas'

/** A saved trace-list view: its filters (GET /api/traces parameters), columns and sort. */
export type SavedView = Static<typeof ViewSchema>
export type ViewState = SavedView['state']

export function useSavedViews(projectId: string) {
  return useQuery({
    queryKey: ['views', projectId],
    queryFn: () => apiGet<{ views: SavedView[] }>(apiPath('/api/views', { project_id: projectId })),
    select: (answer) => answer.views,
  })
}

export function useSaveView(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (view: { name: string; shared: boolean; state: ViewState }) => apiRequest<SavedView>('POST', apiPath('/api/views', { project_id: projectId }), view),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['views', projectId] }),
  })
}

export function useSetDefaultView(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (viewId: string | null) =>
      viewId === null ? apiRequest<void>('DELETE', apiPath('/api/views/default', { project_id: projectId })) : apiRequest<void>('PUT', apiPath(`/api/views/${viewId}/default`, { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['views', projectId] }),
  })
}
