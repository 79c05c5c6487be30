import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { ConnectionTest, LlmConnection } from './types.ts'
import type { Static } from '@sinclair/typebox'
import type { LlmConnectionBodySchema } from '@tracewell/api-schemas'

// A project's LLM connections: the OpenAI-compatible endpoints its judges, experiments and
// playground call (docs/api.md#llm-connections). The key is sent once and never read back.

const connectionPath = (connectionId: string, rest = '') => `/api/llm-connections/${encodeURIComponent(connectionId)}${rest}`

export function useLlmConnections(projectId: string) {
  return useQuery({
    queryKey: ['llm-connections', projectId],
    queryFn: () => apiGet<{ llmConnections: LlmConnection[] }>(apiPath('/api/llm-connections', { project_id: projectId })),
    select: (answer) => answer.llmConnections,
  })
}

// The provider is always OpenAI-compatible: added as the connection is sent.
export type NewLlmConnection = Omit<Static<typeof LlmConnectionBodySchema>, 'provider'>

export function useCreateLlmConnection(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: NewLlmConnection) => apiRequest<LlmConnection>('POST', apiPath('/api/llm-connections', { project_id: projectId }), { ...body, provider: 'openai' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['llm-connections', projectId] }),
  })
}

export function useDeleteLlmConnection(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (connectionId: string) => apiRequest<void>('DELETE', apiPath(connectionPath(connectionId), { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['llm-connections', projectId] }),
  })
}

/** Asks the connection's endpoint for its models: whether the URL and key work, before a judge depends on them. */
export function useTestLlmConnection(projectId: string) {
  return useMutation({
    mutationFn: (connectionId: string) => apiRequest<ConnectionTest>('POST', apiPath(connectionPath(connectionId, '/test'), { project_id: projectId })),
  })
}
