import { Type } from '@sinclair/typebox'

// The figure bounds of the trace and session lists, as query parameters (their checks: query-bounds.ts in the control plane).

// Bounded so that a number like 1e999 (Infinity once parsed) is a 400 here, not a 500 in Postgres.
const milliseconds = (side: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1e12, description: `milliseconds (0–10^12), ${side} inclusive` }))
const usd = (side: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1e12, description: `USD (0–10^12), ${side} inclusive; an unknown cost matches no cost bound` }))
const tokens = (side: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: 1e15, description: `total tokens, ${side} inclusive; unknown tokens match no token bound` }))

/** The figure bounds as query parameters (snake_case, as every query parameter). */
export const figureBoundProperties = {
  min_duration_ms: milliseconds('lower bound,'),
  max_duration_ms: milliseconds('upper bound,'),
  min_cost: usd('lower bound,'),
  max_cost: usd('upper bound,'),
  min_tokens: tokens('lower bound,'),
  max_tokens: tokens('upper bound,'),
}
