import { Type } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shape of GET /api/usage (docs/api.md#trace-queries).

const Nullable = Type.Union([Type.Number(), Type.Null()])

const figures = {
  traces: Type.Integer(),
  spans: Type.Integer(),
  errors: Type.Integer(),
  inputTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'the sum of the counts spans reported; null when none reported one' }),
  outputTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'as inputTokens' }),
  costUsd: Nullable,
  latencyP50Ms: Type.Union([Type.Number(), Type.Null()], { description: 'of LLM calls (spans with a model)' }),
  latencyP95Ms: Nullable,
}

const scoreAverage = {
  name: Type.String(),
  average: Type.Number({ description: 'of the numbers of the scores of this name given in the window or bucket' }),
  count: Type.Integer(),
}

export const UsageSchema = Type.Object({
  totals: Type.Object(figures),
  series: Type.Array(Type.Object({ bucket: IsoDateSchema, group: Type.Union([Type.String(), Type.Null()]), ...figures })),
  scores: Type.Object(
    {
      totals: Type.Array(Type.Object(scoreAverage)),
      series: Type.Array(Type.Object({ bucket: IsoDateSchema, ...scoreAverage })),
    },
    { description: 'each score’s average, by when it was given (not grouped by group_by)' },
  ),
})
