// One usage_rollups row's figures under its key: what a fold adds to the row (usage-deltas.ts of
// @tracewell/write-path) and what an erasure takes back from it (erasure-batch.repository.ts).

export interface UsageRollupFigures {
  project_id: string
  dimension: string
  hour: string
  value: string
  traces: number
  spans: number
  errors: number
  input_tokens: number | null
  output_tokens: number | null
  /** Exact decimal text. */
  cost_usd: string | null
  latency: number[]
  /** Traces with an error span. */
  error_traces: number
  /** Traces by duration bucket, as an array literal subscripted by bucket ('[40:41]={2,1}'); null for none. */
  durations: string | null
  /** Of a user's row of the day, the traces by UTC hour of the day (24 counts from 00:00); null for none or another row. */
  hours: number[] | null
}

/**
 * The rows of who was active on a UTC day (migration 2026-12-06T0710): a user's or a session's
 * traces that started on the day, `hour` the day's start. Kept beside the hourly 'user' and
 * 'session' rows, so that distinct users and sessions over days read a row a day and value.
 */
export const ACTIVE_DAY_DIMENSIONS = { user: 'user.day', session: 'session.day' } as const
