import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema } from './common.schemas.ts'

// The shapes of the annotation queue routes (docs/collaboration.md#annotation-queues).

export const QueueParamsSchema = Type.Object({ queueId: IdSchema })
export const QueueItemParamsSchema = Type.Object({ queueId: IdSchema, itemId: IdSchema })
export const QueueObjectTypeSchema = Type.Union([Type.Literal('trace'), Type.Literal('span'), Type.Literal('session')])

export const QueueBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    scoreConfigIds: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50, description: 'the score configurations a reviewer gives on each item' }),
    assigneeIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 200, description: 'user ids of the team; empty: anyone who may annotate' })),
  },
  { additionalProperties: false },
)
export type QueueBody = Static<typeof QueueBodySchema>

const QueueProgressSchema = Type.Object({ total: Type.Integer(), completed: Type.Integer(), pending: Type.Integer() })
export const QueueSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  scoreConfigIds: Type.Array(Type.String()),
  assigneeIds: Type.Array(Type.String()),
  progress: QueueProgressSchema,
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})
export const QueueWithPeopleSchema = Type.Object({
  ...QueueSchema.properties,
  progressByPerson: Type.Array(Type.Object({ userId: Type.String(), name: Type.String(), completed: Type.Integer() })),
})
export const QueueItemSchema = Type.Object({
  id: Type.String(),
  queueId: Type.String(),
  objectType: QueueObjectTypeSchema,
  objectId: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('completed')]),
  heldBy: Type.Union([Type.String(), Type.Null()]),
  heldUntil: Type.Union([IsoDateSchema, Type.Null()]),
  completedBy: Type.Union([Type.String(), Type.Null()]),
  completedAt: Type.Union([IsoDateSchema, Type.Null()]),
})
