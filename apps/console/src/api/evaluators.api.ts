import { keepPreviousData, useInfiniteQuery, useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { EvaluatorRun, Evaluator, EvaluatorPreview, Judgment, Score } from './types.ts'
import type { Static } from '@sinclair/typebox'
import type { EvaluatorBody, EvaluatorPreviewBodySchema } from '@tracewell/api-schemas'

// LLM judges of a project's traces, their runs and judgments (docs/api.md#llm-as-judge-evaluators).

const evaluatorPath = (evaluatorId: string, rest = '') => `/api/evaluators/${encodeURIComponent(evaluatorId)}${rest}`

/**
 * How often an evaluator's page reads it and its judgments again: every 3 s while judgments are
 * pending or a run is under way, else every 15 s (new traces keep being judged while it is open).
 */
const refreshEvery = (busy: boolean) => (busy ? 3_000 : 15_000)
const whilePending = (pending: boolean) => (pending ? 3_000 : false)

export function useEvaluators(projectId: string) {
  return useQuery({
    queryKey: ['evaluators', projectId],
    queryFn: () => apiGet<{ evaluators: Evaluator[] }>(apiPath('/api/evaluators', { project_id: projectId })),
    select: (answer) => answer.evaluators,
  })
}

const noNames: ReadonlyMap<string, string> = new Map()

/** Each evaluator's name by its id: a judge's score names its evaluator only by id. */
export function useEvaluatorNames(projectId: string): ReadonlyMap<string, string> {
  const evaluators = useQuery({
    queryKey: ['evaluators', projectId],
    queryFn: () => apiGet<{ evaluators: Evaluator[] }>(apiPath('/api/evaluators', { project_id: projectId })),
    select: (answer) => new Map(answer.evaluators.map((evaluator) => [evaluator.id, evaluator.name])),
    staleTime: 60_000,
  })
  return evaluators.data ?? noNames
}

export function useEvaluator(projectId: string, evaluatorId: string, busy: boolean) {
  return useQuery({
    queryKey: ['evaluator', projectId, evaluatorId],
    queryFn: () => apiGet<Evaluator>(apiPath(evaluatorPath(evaluatorId), { project_id: projectId })),
    refetchInterval: (query) => refreshEvery(busy || (query.state.data?.judgments.pending ?? 0) > 0),
  })
}

export type NewEvaluator = EvaluatorBody

export function useCreateEvaluator(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: NewEvaluator) => apiRequest<Evaluator>('POST', apiPath('/api/evaluators', { project_id: projectId }), body),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['evaluators', projectId] }),
  })
}

/** Pauses (false) or resumes (true) the judging of new traces. */
export function useSetEvaluatorEnabled(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: ({ evaluatorId, enabled }: { evaluatorId: string; enabled: boolean }) => apiRequest<Evaluator>('PATCH', apiPath(evaluatorPath(evaluatorId), { project_id: projectId }), { enabled }),
    onSuccess: (evaluator) => {
      client.setQueryData(['evaluator', projectId, evaluator.id], evaluator)
      return client.invalidateQueries({ queryKey: ['evaluators', projectId] })
    },
  })
}

export function useDeleteEvaluator(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (evaluatorId: string) => apiRequest<void>('DELETE', apiPath(evaluatorPath(evaluatorId), { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['evaluators', projectId] }),
  })
}

export type PreviewRequest = Static<typeof EvaluatorPreviewBodySchema>

/** The template filled from one trace, exactly as a judge would be sent it, or why the judge would skip the trace. */
export function useEvaluatorPreview(projectId: string, request: PreviewRequest | null) {
  return useQuery({
    queryKey: ['evaluator-preview', projectId, request],
    enabled: request !== null,
    queryFn: () => apiRequest<EvaluatorPreview>('POST', apiPath('/api/evaluators/preview', { project_id: projectId }), request),
    placeholderData: keepPreviousData,
    retry: false,
  })
}

export function useEvaluatorRuns(projectId: string, evaluatorId: string) {
  return useQuery({
    queryKey: ['evaluation-runs', projectId, evaluatorId],
    queryFn: () => apiGet<{ runs: EvaluatorRun[] }>(apiPath(evaluatorPath(evaluatorId, '/runs'), { project_id: projectId })),
    select: (answer) => answer.runs,
    refetchInterval: (query) => whilePending((query.state.data?.runs ?? []).some((run) => run.status !== 'completed')),
  })
}

export function useCreateEvaluatorRun(projectId: string, evaluatorId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (window: { from: string; to: string }) => apiRequest<EvaluatorRun>('POST', apiPath(evaluatorPath(evaluatorId, '/runs'), { project_id: projectId }), window),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['evaluation-runs', projectId, evaluatorId] }),
  })
}

export type JudgmentStatus = Judgment['status']

export function useJudgments(projectId: string, evaluatorId: string, query: { status?: JudgmentStatus | undefined; runId?: string | undefined }, busy: boolean) {
  return useInfiniteQuery({
    queryKey: ['judgments', projectId, evaluatorId, query],
    queryFn: ({ pageParam }) =>
      apiGet<{ judgments: Judgment[]; nextCursor: string | null }>(apiPath(evaluatorPath(evaluatorId, '/judgments'), { project_id: projectId, status: query.status, run_id: query.runId, limit: 50, cursor: pageParam })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
    // Only the newest page is re-read (maxPages would drop the older ones a person loaded).
    refetchInterval: refreshEvery(busy),
  })
}

/** The score each judgment gave, read from its trace's scores (a judgment carries only the score's id). */
export function useJudgmentScores(projectId: string, scoreName: string, judgments: readonly Judgment[]): ReadonlyMap<string, Score> {
  const given = judgments.filter((judgment) => judgment.scoreId !== null)
  const answers = useQueries({
    queries: given.map((judgment) => ({
      queryKey: ['judgment-score', projectId, judgment.traceId, scoreName, judgment.updatedAt],
      queryFn: () => apiGet<{ scores: Score[] }>(apiPath('/api/scores', { project_id: projectId, trace_id: judgment.traceId, name: scoreName, source: 'eval', limit: 50 })),
      staleTime: Infinity,
    })),
  })
  const scores = new Map<string, Score>()
  for (const answer of answers) for (const score of answer.data?.scores ?? []) scores.set(score.id, score)
  return scores
}
