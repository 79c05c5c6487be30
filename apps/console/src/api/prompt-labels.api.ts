import { useInfiniteQuery, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { LabelHistory } from './types.ts'
import type { MoveLabelBody, PromptLabelList } from '@tracewell/api-schemas'

// A promptset's labels (named pointers at versions; `production` is the live one) and the history
// of their moves: docs/prompts.md.

const labelsPath = (promptsetId: string, label?: string) => `/api/promptsets/${encodeURIComponent(promptsetId)}/${label === undefined ? 'labels' : `labels/${encodeURIComponent(label)}`}`

export function usePromptLabels(projectId: string, promptsetId: string) {
  return useQuery({
    queryKey: ['prompt-labels', projectId, promptsetId],
    queryFn: () => apiGet<PromptLabelList>(apiPath(labelsPath(promptsetId), { project_id: projectId })),
    select: (data) => data.labels,
  })
}

export function useLabelHistory(projectId: string, promptsetId: string) {
  return useInfiniteQuery({
    queryKey: ['label-history', projectId, promptsetId],
    queryFn: ({ pageParam }) =>
      apiGet<LabelHistory>(apiPath(`/api/promptsets/${encodeURIComponent(promptsetId)}/label-history`, { project_id: projectId, limit: 20, cursor: pageParam })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  })
}

/**
 * After a change of labels (a move, a removal, a version made live, which moves production): the
 * labels, their history, and the versions with their labels and live one are read again.
 */
export function refreshPromptset(client: QueryClient, projectId: string, promptsetId: string) {
  return Promise.all([['prompt-labels', projectId, promptsetId], ['label-history', projectId, promptsetId], ['promptset', projectId, promptsetId]].map((queryKey) => client.invalidateQueries({ queryKey })))
}

function useLabelChange<Input>(projectId: string, promptsetId: string, change: (input: Input) => Promise<unknown>) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: change,
    // Refreshed after a refusal too: a 409 means someone else moved the label meanwhile.
    onSettled: () => refreshPromptset(client, projectId, promptsetId),
  })
}

/** expectedVersion is where the page saw the label (null: not there): the server refuses with 409 if it moved since. */
export type LabelMoveInput = Required<MoveLabelBody> & { label: string }

export function useMoveLabel(projectId: string, promptsetId: string) {
  return useLabelChange(projectId, promptsetId, ({ label, version, expectedVersion }: LabelMoveInput) =>
    apiRequest('PUT', apiPath(labelsPath(promptsetId, label), { project_id: projectId }), { version, expectedVersion }),
  )
}

export function useRemoveLabel(projectId: string, promptsetId: string) {
  return useLabelChange(projectId, promptsetId, (label: string) => apiRequest<void>('DELETE', apiPath(labelsPath(promptsetId, label), { project_id: projectId })))
}
