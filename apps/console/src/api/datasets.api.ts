import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { ApiError, apiGet, apiPath, apiRequest, csrfHeader } from './client.ts'
import type { Dataset, DatasetItem, DatasetWithItems } from './types.ts'
import type { DatasetItemBody } from '@tracewell/api-schemas'

export function useDatasets(projectId: string) {
  return useQuery({
    queryKey: ['datasets', projectId],
    queryFn: () => apiGet<{ datasets: Dataset[] }>(apiPath('/api/datasets', { project_id: projectId })),
    select: (answer) => answer.datasets,
  })
}

export function useDataset(projectId: string, datasetId: string, version: number | undefined) {
  return useQuery({
    queryKey: ['dataset', projectId, datasetId, version ?? 'current'],
    queryFn: () => apiGet<DatasetWithItems>(apiPath(`/api/datasets/${encodeURIComponent(datasetId)}`, { project_id: projectId, version })),
  })
}

export function useCreateDataset(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: { name: string; description?: string }) => apiRequest<Dataset>('POST', apiPath('/api/datasets', { project_id: projectId }), body),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['datasets', projectId] }),
  })
}

export type NewItem = DatasetItemBody

/** Items added: as JSON ({items}) or as the text of a JSONL file, sent as it is. */
export function useAddItems(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: async ({ datasetId, items, jsonl }: { datasetId: string; items?: NewItem[]; jsonl?: string }) => {
      const path = apiPath(`/api/datasets/${encodeURIComponent(datasetId)}/items`, { project_id: projectId })
      if (jsonl === undefined) return apiRequest<{ version: number; items: DatasetItem[] }>('POST', path, { items })
      const response = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/x-ndjson', [csrfHeader]: '1', accept: 'application/json' }, body: jsonl })
      const answer = (await response.json()) as { message?: string; version: number; items: DatasetItem[] }
      if (!response.ok) throw new ApiError(response.status, answer.message ?? `${response.status}`)
      return answer
    },
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['datasets', projectId] })
      void client.invalidateQueries({ queryKey: ['dataset', projectId] })
    },
  })
}

export function useDeleteItem(projectId: string, datasetId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (itemId: string) => apiRequest<{ version: number }>('DELETE', apiPath(`/api/datasets/${encodeURIComponent(datasetId)}/items/${encodeURIComponent(itemId)}`, { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['dataset', projectId, datasetId] }),
  })
}

/** Where the items of a version download as JSONL. */
export const itemsDownloadPath = (projectId: string, datasetId: string, version: number) =>
  apiPath(`/api/datasets/${encodeURIComponent(datasetId)}/items.jsonl`, { project_id: projectId, version })
