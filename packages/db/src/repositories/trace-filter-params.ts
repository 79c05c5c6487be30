import type { TraceFilter } from './trace-search.repository.ts'

// An evaluator's filter is written as GET /api/traces's query parameters (docs/api.md#trace-queries),
// so that what a person filters the list by is what they paste into an evaluator. Stored as given;
// read back into the trace search's filter here, by the control plane and the evaluator worker alike.

export interface TraceFilterParams {
  service?: string
  model?: string
  vendor?: string
  status?: 'error' | 'ok'
  name?: string
  attr?: string[]
  session?: string
  user?: string
  min_duration_ms?: number
  max_duration_ms?: number
  min_cost?: number
  max_cost?: number
  min_tokens?: number
  max_tokens?: number
  q?: string
  score_name?: string
  min_score?: number
  max_score?: number
  score_value?: string
}

/** The trace search filter of a project for these parameters (`attr` entries are `key=value`, checked when the evaluator was made). */
export function traceFilterOf(projectId: string, params: TraceFilterParams): TraceFilter {
  return {
    projectId,
    service: params.service,
    model: params.model,
    vendor: params.vendor,
    status: params.status,
    name: params.name,
    attributes: params.attr?.map((pair) => ({ key: pair.slice(0, pair.indexOf('=')), value: pair.slice(pair.indexOf('=') + 1) })),
    sessionId: params.session,
    userId: params.user,
    minDurationMs: params.min_duration_ms,
    maxDurationMs: params.max_duration_ms,
    minCostUsd: params.min_cost,
    maxCostUsd: params.max_cost,
    minTokens: params.min_tokens,
    maxTokens: params.max_tokens,
    text: params.q,
    score:
      params.score_name === undefined ? undefined : { name: params.score_name, min: params.min_score, max: params.max_score, value: params.score_value },
  }
}
