import { Type, type Static } from '@sinclair/typebox'

// The shapes of a project's ingest rate limit (docs/api.md#ingest-rate-limits).

const LimitValuesSchema = Type.Object({
  spansPerSecond: Type.Union([Type.Integer(), Type.Null()], { description: 'spans per second on average; null: no limit' }),
  burst: Type.Union([Type.Integer(), Type.Null()], { description: 'spans at once above the rate (the token bucket size); null: no limit' }),
})

export const IngestLimitSchema = Type.Object({
  projectId: Type.String(),
  source: Type.Union([Type.Literal('project'), Type.Literal('default')], { description: 'project: its own limit applies; default: the settings’ limit does' }),
  spansPerSecond: LimitValuesSchema.properties.spansPerSecond,
  burst: LimitValuesSchema.properties.burst,
  default: Type.Object(LimitValuesSchema.properties, { description: 'INGEST_RATE_LIMIT_SPANS_PER_SECOND and INGEST_RATE_LIMIT_BURST, what a project without its own limit gets' }),
})
export type IngestLimit = Static<typeof IngestLimitSchema>

export const IngestLimitBodySchema = Type.Object(
  {
    spansPerSecond: Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()], {
      description: 'spans per second on average (1–10000000); null exempts the project from any limit, the default included',
    }),
    burst: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'spans at once above the rate (1–100000000); twice spansPerSecond when absent' })),
  },
  { additionalProperties: false },
)
export type IngestLimitBody = Static<typeof IngestLimitBodySchema>
