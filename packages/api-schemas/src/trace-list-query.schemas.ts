import { Type, type Static } from '@sinclair/typebox'
import { figureBoundProperties } from './figure-bounds.schemas.ts'
import { includeTracewellCallsProperty } from './tracewell-calls.query.ts'

// GET /api/traces's query: its filters are also what evaluators, monitors and dashboards store (trace-filter.schemas.ts).

const ProjectScope = {
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key (a project key implies its own)' })),
}

export const TraceListQuerySchema = Type.Object({
  ...ProjectScope,
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'traces per page (1–500)' }),
  cursor: Type.Optional(Type.String({ maxLength: 300, description: 'nextCursor of the previous page' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601: traces starting at or after (inclusive)' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601: traces starting before (exclusive)' })),
  service: Type.Optional(Type.String({ maxLength: 500, description: 'a span of the trace has this service.name' })),
  model: Type.Optional(Type.String({ maxLength: 500, description: 'an LLM span of the trace used this model' })),
  vendor: Type.Optional(Type.String({ maxLength: 500, description: 'an LLM span of the trace called this vendor' })),
  status: Type.Optional(Type.Union([Type.Literal('error'), Type.Literal('ok')], { description: 'error: a span failed; ok: none did' })),
  name: Type.Optional(Type.String({ maxLength: 500, description: 'contained in the root span’s name or any span’s (case-insensitive)' })),
  attr: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 10, description: 'key=value on a span’s or its resource’s attributes (repeatable; all must hold)' })),
  session: Type.Optional(Type.String({ maxLength: 500, description: 'session id' })),
  user: Type.Optional(Type.String({ maxLength: 500, description: 'user id' })),
  ...figureBoundProperties,
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'text contained in a span’s attributes: prompts, completions (case-insensitive), its words as whole words; must hold a word (letters or digits)',
    }),
  ),
  score_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the trace has a score of this name (what min_score, max_score, score_value and sort=score apply to)' })),
  min_score: Type.Optional(Type.Number({ minimum: -1e12, maximum: 1e12, description: 'with score_name: a score of that name at least this (its number: the value, 1/0, or the category’s value)' })),
  max_score: Type.Optional(Type.Number({ minimum: -1e12, maximum: 1e12, description: 'with score_name: a score of that name at most this' })),
  score_value: Type.Optional(Type.String({ maxLength: 200, description: 'with score_name: a score of that name with this label (a category, or true/false)' })),
  sort: Type.Union([Type.Literal('time'), Type.Literal('duration'), Type.Literal('cost'), Type.Literal('tokens'), Type.Literal('score')], {
    default: 'time',
    description:
      'cost, tokens: traces of unknown cost or tokens (null) come last in either order; score: the average of the trace’s score_name scores (with score_name, only traces that have one are listed)',
  }),
  order: Type.Union([Type.Literal('desc'), Type.Literal('asc')], { default: 'desc' }),
  ...includeTracewellCallsProperty,
})
export type TraceListQuery = Static<typeof TraceListQuerySchema>
