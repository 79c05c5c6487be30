import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'

// A project's masking rules (team key): docs/api.md#masking. Ingest applies a change within 2 s.

export const DETECTORS = ['email', 'phone', 'credit_card', 'iban', 'ip', 'secret', 'regex'] as const
export type Detector = (typeof DETECTORS)[number]

export interface MaskingRule {
  detector: Detector
  pattern?: string
  attributes?: string[]
  replacement?: string
}

export interface ProjectMasking {
  projectId: string
  source: 'project' | 'default'
  rules: MaskingRule[]
  default: MaskingRule[]
}

const maskingPath = (projectId: string) => `/api/projects/${encodeURIComponent(projectId)}/masking`

export function useMaskingRules(projectId: string) {
  return useQuery({ queryKey: ['masking', projectId], queryFn: () => apiGet<ProjectMasking>(maskingPath(projectId)) })
}

/** Saves the project's own rules, or removes them (`null`) to go back to the default. */
export function useSaveMaskingRules(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: async (rules: MaskingRule[] | null) =>
      rules === null ? (await apiRequest<void>('DELETE', maskingPath(projectId)), null) : apiRequest<ProjectMasking>('PUT', maskingPath(projectId), { rules }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['masking', projectId] }),
  })
}

/** What rules (the ones being edited) make of a text, by the engine ingest runs. */
export function useTestMasking(projectId: string) {
  return useMutation({
    mutationFn: (body: { rules: MaskingRule[]; text: string }) => apiRequest<{ masked: string; changed: boolean }>('POST', `${maskingPath(projectId)}/test`, body),
  })
}
