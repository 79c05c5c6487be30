import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import { refreshPromptset } from './prompt-labels.api.ts'
import type { Experiment, ExperimentWithResults } from './types.ts'
import type { Static } from '@sinclair/typebox'
import type { CreateExperimentBodySchema, MoveLabelBody, MoveLabelResponse } from '@tracewell/api-schemas'

/** Experiments still running are read again every 2 s, until they are done. */
const whileRunning = (experiments: Array<Pick<Experiment, 'status' | 'aggregates'>>) =>
  experiments.some((experiment) => experiment.status === 'queued' || experiment.status === 'running') ? 2_000 : false

export function useExperiments(projectId: string, datasetId: string) {
  return useQuery({
    queryKey: ['experiments', projectId, datasetId],
    queryFn: () => apiGet<{ experiments: Experiment[] }>(apiPath('/api/experiments', { project_id: projectId, dataset_id: datasetId })),
    select: (answer) => answer.experiments,
    refetchInterval: (query) => whileRunning(query.state.data?.experiments ?? []),
  })
}

export function useExperimentsWithResults(projectId: string, ids: string[]) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: ['experiment', projectId, id],
      queryFn: () => apiGet<ExperimentWithResults>(apiPath(`/api/experiments/${encodeURIComponent(id)}`, { project_id: projectId })),
      refetchInterval: (query: { state: { data?: ExperimentWithResults } }) => (query.state.data ? whileRunning([query.state.data]) : false),
    })),
  })
}

export type NewExperiment = Static<typeof CreateExperimentBodySchema>

export function useCreateExperiment(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: NewExperiment) => apiRequest<Experiment>('POST', apiPath('/api/experiments', { project_id: projectId }), body),
    onSuccess: (experiment) => void client.invalidateQueries({ queryKey: ['experiments', projectId, experiment.datasetId] }),
  })
}

/** expectedVersion is where the page saw `production` (null: nowhere): the server refuses with 409 if it moved since. */
export type Promotion = Required<MoveLabelBody> & { promptsetId: string }

/** Points `production` at a version: the prompt labels API (compared experiments may be of several promptsets, so not useMoveLabel). */
export function usePromote(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: ({ promptsetId, version, expectedVersion }: Promotion) =>
      apiRequest<MoveLabelResponse>('PUT', apiPath(`/api/promptsets/${encodeURIComponent(promptsetId)}/labels/production`, { project_id: projectId }), { version, expectedVersion }),
    // Refreshed after a refusal too: a 409 means someone moved the label meanwhile.
    onSettled: (_answer, _error, { promptsetId }) => refreshPromptset(client, projectId, promptsetId),
  })
}
