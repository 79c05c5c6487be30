import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import { refreshPromptset } from './prompt-labels.api.ts'
import type { Prompt, Promptset, PromptsetWithLabels } from './types.ts'
import type { CreatePromptBody, LiveResponse, PromptsetList, PromptsetWithPrompts as ServedPromptset } from '@tracewell/api-schemas'

export function usePromptsets(projectId: string) {
  return useQuery({
    queryKey: ['promptsets', projectId],
    queryFn: () => apiGet<PromptsetList>(apiPath('/api/promptsets', { project_id: projectId })),
    select: (data) => data.promptsets,
  })
}

export function useCreatePromptset(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: { name: string; description?: string }) => apiRequest<Promptset>('POST', apiPath('/api/promptsets', { project_id: projectId }), body),
    onSuccess: () => client.invalidateQueries({ queryKey: ['promptsets', projectId] }),
  })
}

export function usePromptset(projectId: string, promptsetId: string) {
  return useQuery({
    queryKey: ['promptset', projectId, promptsetId],
    // A picker with nothing chosen yet asks for no promptset.
    enabled: promptsetId !== '',
    queryFn: () => apiGet<PromptsetWithLabels>(apiPath(`/api/promptsets/${encodeURIComponent(promptsetId)}`, { project_id: projectId })),
  })
}

export type NewPromptVersion = CreatePromptBody

export function useCreatePromptVersion(projectId: string, promptsetId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: NewPromptVersion) => apiRequest<Prompt>('POST', apiPath(`/api/promptsets/${encodeURIComponent(promptsetId)}/prompts`, { project_id: projectId }), body),
    // A version made live moves production.
    onSuccess: () => refreshPromptset(client, projectId, promptsetId),
  })
}

export function useSetLiveVersion(projectId: string, promptsetId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (version: number | null) =>
      apiRequest<LiveResponse>('PUT', apiPath(`/api/promptsets/${encodeURIComponent(promptsetId)}/live`, { project_id: projectId }), { version }),
    // Live is the production label: the labels and their history change with it.
    onSuccess: () => refreshPromptset(client, projectId, promptsetId),
  })
}

/** GET /api/promptset with variables filled in, as an SDK would read the prompt (the SDKs' shape: no labels). */
export async function previewPrompt(projectId: string, promptsetId: string, version: number, variables: Record<string, string>): Promise<ServedPromptset> {
  const query = new URLSearchParams({ project_id: projectId, promptset_id: promptsetId, version: String(version) })
  // Empty values are sent too: the server names the variables still missing.
  for (const [name, value] of Object.entries(variables)) query.set(`variables.${name}`, value)
  return apiGet<ServedPromptset>(`/api/promptset?${query.toString()}`)
}
