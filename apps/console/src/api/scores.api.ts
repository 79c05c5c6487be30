import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { Score, ScoreConfig } from './types.ts'
import type { ScoreConfigBody } from '@tracewell/api-schemas'

export function useScoreConfigs(projectId: string) {
  return useQuery({
    queryKey: ['score-configs', projectId],
    queryFn: () => apiGet<{ scoreConfigs: ScoreConfig[] }>(apiPath('/api/score-configs', { project_id: projectId })),
    select: (answer) => answer.scoreConfigs,
    staleTime: 60_000,
  })
}

export type NewScoreConfig = ScoreConfigBody

export function useCreateScoreConfig(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (config: NewScoreConfig) => apiRequest<ScoreConfig>('POST', apiPath('/api/score-configs', { project_id: projectId }), config),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['score-configs', projectId] }),
  })
}

export interface Annotation {
  traceId: string
  spanId?: string | undefined
  name: string
  value: number | boolean | string
  comment?: string | undefined
}

/**
 * One annotation per score name on a trace or span from this console: its id is derived from
 * them, so changing one's mind replaces the score instead of adding a second.
 */
export const annotationId = (annotation: Pick<Annotation, 'traceId' | 'spanId' | 'name'>): string =>
  `annotation:${annotation.traceId}:${annotation.spanId ?? 'trace'}:${annotation.name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 120)}`

/** After a score changes, the trace and the lists that show its scores are read again. */
function useScoreChanged(projectId: string, traceId: string) {
  const client = useQueryClient()
  return () => {
    void client.invalidateQueries({ queryKey: ['trace', projectId, traceId] })
    void client.invalidateQueries({ queryKey: ['traces', projectId] })
    void client.invalidateQueries({ queryKey: ['usage', projectId] })
  }
}

export function useAnnotate(projectId: string, traceId: string) {
  const changed = useScoreChanged(projectId, traceId)
  return useMutation({
    mutationFn: (annotation: Annotation) =>
      apiRequest<Score>('POST', apiPath('/api/scores', { project_id: projectId }), {
        id: annotationId(annotation),
        traceId: annotation.traceId,
        ...(annotation.spanId ? { spanId: annotation.spanId } : {}),
        name: annotation.name,
        value: annotation.value,
        ...(annotation.comment ? { comment: annotation.comment } : {}),
        source: 'annotation',
      }),
    onSuccess: changed,
  })
}

export function useDeleteScore(projectId: string, traceId: string) {
  const changed = useScoreChanged(projectId, traceId)
  return useMutation({
    mutationFn: (scoreId: string) => apiRequest<void>('DELETE', apiPath(`/api/scores/${encodeURIComponent(scoreId)}`, { project_id: projectId })),
    onSuccess: changed,
  })
}
