import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema } from './common.schemas.ts'

// The shapes of the erasure routes (docs/api.md#erasures).

const NonEmptyText = (description: string) => Type.String({ minLength: 1, maxLength: 1024, description })

export const ErasureBodySchema = Type.Object(
  {
    userId: Type.Optional(NonEmptyText('the user (user.id / langtrace user id) whose traces go: those the trace list shows under this user')),
    sessionId: Type.Optional(NonEmptyText('the session whose traces go, whatever their users')),
    traceIds: Type.Optional(
      Type.Array(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: '32 hex characters' }), { minItems: 1, maxItems: 10_000, description: 'the traces that go' }),
    ),
  },
  { additionalProperties: false, description: 'exactly one of userId, sessionId, traceIds' },
)
export type ErasureBody = Static<typeof ErasureBodySchema>

const ErasureStatusSchema = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('rechecking'), Type.Literal('completed')], {
  description: 'queued, running (first pass), rechecking (its second pass, for what was still queued, is due or under way), completed',
})

export const ErasureAcceptedSchema = Type.Object({ id: Type.String(), status: ErasureStatusSchema })

export const ErasureSchema = Type.Object({
  id: Type.String(),
  status: ErasureStatusSchema,
  userId: Type.Union([Type.String(), Type.Null()]),
  sessionId: Type.Union([Type.String(), Type.Null()]),
  traceCount: Type.Integer({ description: 'how many traces a request by traceIds named; 0 otherwise' }),
  deleted: Type.Object({
    spans: Type.Integer(),
    traces: Type.Integer(),
    sessions: Type.Integer({ description: 'sessions left without any trace, whose summary and session scores went' }),
    scores: Type.Integer({ description: 'scores and annotations' }),
    judgments: Type.Integer({ description: 'LLM-judge judgments of the traces' }),
    datasetItems: Type.Integer({ description: 'dataset items taken from the traces (every version of each)' }),
  }),
  requestedBy: Type.Union([Type.String(), Type.Null()], { description: 'the id of the key (or console session’s key) that asked' }),
  createdAt: IsoDateSchema,
  completedAt: Type.Union([IsoDateSchema, Type.Null()]),
})
export type Erasure = Static<typeof ErasureSchema>

export const ErasureListSchema = Type.Object({ erasures: Type.Array(ErasureSchema) })

export const ErasureParamsSchema = Type.Object({ projectId: IdSchema, erasureId: IdSchema })
