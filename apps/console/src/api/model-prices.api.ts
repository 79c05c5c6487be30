import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'
import type { ModelPrice, ModelPriceInput } from './types.ts'

// A project's own model prices (team key): docs/semantic-conventions.md, "Project prices".

const pricesPath = (projectId: string) => `/api/projects/${encodeURIComponent(projectId)}/model-prices`

export function useModelPrices(projectId: string) {
  return useQuery({
    queryKey: ['model-prices', projectId],
    queryFn: () => apiGet<{ modelPrices: ModelPrice[] }>(pricesPath(projectId)),
    select: (data) => data.modelPrices,
  })
}

/** Creates a price, or with `id` changes that one in place. */
export function useSaveModelPrice(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: ({ id, price }: { id?: string | undefined; price: ModelPriceInput }) =>
      id === undefined ? apiRequest<ModelPrice>('POST', pricesPath(projectId), price) : apiRequest<ModelPrice>('PUT', `${pricesPath(projectId)}/${encodeURIComponent(id)}`, price),
    onSuccess: () => client.invalidateQueries({ queryKey: ['model-prices', projectId] }),
  })
}

export function useDeleteModelPrice(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (id: string) => apiRequest<void>('DELETE', `${pricesPath(projectId)}/${encodeURIComponent(id)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['model-prices', projectId] }),
  })
}
