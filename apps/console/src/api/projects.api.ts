import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { ApiKey, ApiKeyScope, IngestLimit, Project, RetentionPolicy } from './types.ts'

export const projectsQuery = queryOptions({ queryKey: ['projects'], queryFn: () => apiGet<{ projects: Project[] }>('/api/projects') })

export function useProjects() {
  return useQuery({ ...projectsQuery, select: (data) => data.projects })
}

export function useCreateProject() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: { name: string; description?: string }) => apiRequest<Project>('POST', '/api/projects', body),
    onSuccess: () => client.invalidateQueries({ queryKey: ['projects'] }),
  })
}

/** Keys of a project, or the team's own keys (`{ teamId }`). */
export type KeyScope = { projectId: string } | { teamId: string }

function scopeQuery(scope: KeyScope) {
  return 'projectId' in scope ? { project_id: scope.projectId } : { team_id: scope.teamId }
}

export function useApiKeys(scope: KeyScope) {
  return useQuery({
    queryKey: ['api-keys', scope],
    queryFn: () => apiGet<{ apiKeys: ApiKey[] }>(apiPath('/api/api-keys', scopeQuery(scope))),
    select: (data) => data.apiKeys,
  })
}

export function useCreateApiKey(scope: KeyScope) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (terms: { scopes?: ApiKeyScope[]; expiresAt?: string } = {}) => apiRequest<{ apiKey: string }>('POST', apiPath('/api/api-key', scopeQuery(scope)), terms),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys', scope] }),
  })
}

export function useRevokeApiKey(scope: KeyScope) {
  const client = useQueryClient()
  return useMutation({
    // A project's key is revoked with its project named: what a project admin may do.
    mutationFn: (id: string) => apiRequest<void>('DELETE', apiPath(`/api/api-keys/${encodeURIComponent(id)}`, 'projectId' in scope ? { project_id: scope.projectId } : {})),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys', scope] }),
  })
}

export function useRetention(projectId: string) {
  return useQuery({ queryKey: ['retention', projectId], queryFn: () => apiGet<RetentionPolicy>(`/api/projects/${encodeURIComponent(projectId)}/retention`) })
}

export function useSaveRetention(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: { enabled: boolean; retentionDays: number }) => apiRequest<RetentionPolicy>('PUT', `/api/projects/${encodeURIComponent(projectId)}/retention`, body),
    onSuccess: (policy) => client.setQueryData(['retention', projectId], policy),
  })
}

const ingestLimitPath = (projectId: string) => `/api/projects/${encodeURIComponent(projectId)}/ingest-limit`

export function useIngestLimit(projectId: string) {
  return useQuery({ queryKey: ['ingest-limit', projectId], queryFn: () => apiGet<IngestLimit>(ingestLimitPath(projectId)) })
}

/** Sets the project's own limit (`spansPerSecond: null` exempts it), or removes it (`null`) to go back to the default. */
export function useSaveIngestLimit(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: async (body: { spansPerSecond: number | null; burst?: number } | null) =>
      body === null ? (await apiRequest<void>('DELETE', ingestLimitPath(projectId)), null) : apiRequest<IngestLimit>('PUT', ingestLimitPath(projectId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: ['ingest-limit', projectId] }),
  })
}
