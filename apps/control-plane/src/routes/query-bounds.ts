import { BadRequestError } from '@tracewell/http'

// The bounds users reach for on every list of traces or sessions: a time window and lower and
// upper bounds on duration, tokens and cost. Bounds are inclusive; the window is [from, to).
// A figure that is unknown (a null cost or token count) matches no bound on it: it could be
// anything, so it is neither "at most" nor "at least" a number.

interface FigureBoundQuery {
  min_duration_ms?: number | undefined
  max_duration_ms?: number | undefined
  min_cost?: number | undefined
  max_cost?: number | undefined
  min_tokens?: number | undefined
  max_tokens?: number | undefined
}

/** The bounds as the repositories take them; a lower bound above its upper bound is a 400 (it could only match nothing). */
export function figureBounds(query: FigureBoundQuery) {
  for (const figure of ['duration_ms', 'cost', 'tokens'] as const) {
    const min = query[`min_${figure}`]
    const max = query[`max_${figure}`]
    if (min !== undefined && max !== undefined && min > max) throw new BadRequestError(`querystring/max_${figure}: less than min_${figure} (${max} < ${min})`)
  }
  return {
    minDurationMs: query.min_duration_ms,
    maxDurationMs: query.max_duration_ms,
    minCostUsd: query.min_cost,
    maxCostUsd: query.max_cost,
    minTokens: query.min_tokens,
    maxTokens: query.max_tokens,
  }
}

const isoDatePattern = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/

export function parseIsoDate(name: string, raw: string | undefined, part: 'querystring' | 'body' = 'querystring'): Date | undefined {
  if (raw === undefined) return undefined
  const date = isoDatePattern.test(raw) ? new Date(raw) : undefined
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new BadRequestError(`${part}/${name}: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got ${JSON.stringify(raw)}`)
  }
  return date
}

/** `from` (inclusive) and `to` (exclusive), each optional; `from` not before `to` is a 400 (an empty window). */
export function timeWindow(query: { from?: string | undefined; to?: string | undefined }): { from: Date | undefined; to: Date | undefined } {
  const from = parseIsoDate('from', query.from)
  const to = parseIsoDate('to', query.to)
  if (from !== undefined && to !== undefined && from >= to) throw new BadRequestError('querystring/from: must be before to (from is inclusive, to exclusive)')
  return { from, to }
}
