import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { IngestLimit, Project, RetentionPolicy } from './types.ts'
import type { ApiKeyList, CreateApiKeyBody, CreateProjectBody, IngestLimitBody, NewSecret, ProjectList, RetentionPolicyBody } from '@tracewell/api-schemas'

export const projectsQuery = queryOptions({ queryKey: ['projects'], queryFn: () => apiGet<ProjectList>('/api/projects') })

export function useProjects() {
  return useQuery({ ...projectsQuery, select: (data) => data.projects })
}

export function useCreateProject() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: CreateProjectBody) => apiRequest<Project>('POST', '/api/projects', body),
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
    queryFn: () => apiGet<ApiKeyList>(apiPath('/api/api-keys', scopeQuery(scope))),
    select: (data) => data.apiKeys,
  })
}

export function useCreateApiKey(scope: KeyScope) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (terms: CreateApiKeyBody = {}) => apiRequest<NewSecret>('POST', apiPath('/api/api-key', scopeQuery(scope)), terms),
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
    mutationFn: (body: RetentionPolicyBody) => apiRequest<RetentionPolicy>('PUT', `/api/projects/${encodeURIComponent(projectId)}/retention`, body),
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
    mutationFn: async (body: IngestLimitBody | null) =>
      body === null ? (await apiRequest<void>('DELETE', ingestLimitPath(projectId)), null) : apiRequest<IngestLimit>('PUT', ingestLimitPath(projectId), body),
    onSuccess: () => client.invalidateQueries({ queryKey: ['ingest-limit', projectId] }),
  })
}
