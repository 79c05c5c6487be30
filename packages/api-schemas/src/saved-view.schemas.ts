import { Type } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema } from './common.schemas.ts'

// The shapes of the saved view routes (docs/collaboration.md#saved-views).

export const ViewParamsSchema = Type.Object({ viewId: IdSchema })

const ViewStateSchema = Type.Object(
  {
    filters: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: 2_000 }), Type.Number(), Type.Boolean(), Type.Array(Type.String({ maxLength: 2_000 }), { maxItems: 50 })]), { description: 'GET /api/traces parameters' })),
    columns: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 })),
    sort: Type.Optional(Type.String({ maxLength: 64 })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  },
  { additionalProperties: false },
)
export const ViewBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    shared: Type.Optional(Type.Boolean({ description: 'seen by everyone in the project (needs the views:share permission); private by default' })),
    state: ViewStateSchema,
  },
  { additionalProperties: false },
)
export const ViewSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  shared: Type.Boolean(),
  owner: Type.Object({ id: Type.String(), name: Type.String() }),
  state: ViewStateSchema,
  isDefault: Type.Boolean({ description: 'the caller’s default view in this project' }),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})
