import { Type } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema } from './common.schemas.ts'

// The shapes of the comment routes (docs/collaboration.md#comments).

const ObjectTypeSchema = Type.Union([Type.Literal('trace'), Type.Literal('span'), Type.Literal('session'), Type.Literal('prompt'), Type.Literal('dataset_item')], {
  description: 'what the comment is about',
})
const ObjectIdSchema = Type.String({ minLength: 1, maxLength: 256, description: 'the trace, span, session, prompt version or dataset item id' })
const BodyTextSchema = Type.String({ minLength: 1, maxLength: 10_000, description: 'markdown; mention a member as @[Name](user:<id>)' })

const CommentPersonSchema = Type.Object({ id: Type.String(), name: Type.String() })
export const CommentSchema = Type.Object({
  id: Type.String(),
  objectType: ObjectTypeSchema,
  objectId: Type.String(),
  threadId: Type.Union([Type.String(), Type.Null()], { description: "the thread's first comment; null for a first comment" }),
  author: Type.Union([CommentPersonSchema, Type.Null()], { description: 'null once the author’s account is gone' }),
  body: Type.String(),
  mentions: Type.Array(Type.String(), { description: 'user ids' }),
  resolvedAt: Type.Union([IsoDateSchema, Type.Null()]),
  resolvedBy: Type.Union([CommentPersonSchema, Type.Null()]),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

export const CommentListQuerySchema = Type.Object({ project_id: Type.Optional(Type.String()), objectType: ObjectTypeSchema, objectId: ObjectIdSchema })
export const CommentCreateQuerySchema = Type.Object({ project_id: Type.Optional(Type.String()), objectType: Type.Optional(ObjectTypeSchema), objectId: Type.Optional(ObjectIdSchema) })
export const CommentBodySchema = Type.Object(
  {
    objectType: Type.Optional(ObjectTypeSchema),
    objectId: Type.Optional(ObjectIdSchema),
    threadId: Type.Optional(Type.String({ description: 'reply to this first comment' })),
    body: BodyTextSchema,
  },
  { additionalProperties: false },
)
export const CommentPatchBodySchema = Type.Object(
  {
    body: Type.Optional(BodyTextSchema),
    resolved: Type.Optional(Type.Boolean({ description: 'resolve (true) or reopen (false) the thread this first comment starts' })),
  },
  { additionalProperties: false, minProperties: 1 },
)
export const CommentParamsSchema = Type.Object({ commentId: IdSchema })

export const CommentNotificationSchema = Type.Object({
  id: Type.String(),
  kind: Type.Literal('mention'),
  projectId: Type.String(),
  comment: Type.Union([CommentSchema, Type.Null()]),
  createdAt: IsoDateSchema,
  readAt: Type.Union([IsoDateSchema, Type.Null()]),
})
