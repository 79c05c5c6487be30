import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema, LabelNameSchema, ProjectScopeQuerySchema } from './common.schemas.ts'

// The shapes of the prompt label routes (docs/prompts.md#managing-labels): named pointers at versions of a registry.

const VersionSchema = Type.Integer({ minimum: 1, maximum: 2_147_483_647 })

export const PromptLabelSchema = Type.Object({
  name: Type.String(),
  version: Type.Integer(),
  updatedAt: { ...IsoDateSchema, description: 'when the label last moved' },
})
export type PromptLabel = Static<typeof PromptLabelSchema>

export const PromptLabelListSchema = Type.Object({ labels: Type.Array(PromptLabelSchema, { description: 'by name' }) })
export type PromptLabelList = Static<typeof PromptLabelListSchema>

export const PromptLabelParamsSchema = Type.Object({ promptsetId: IdSchema, label: LabelNameSchema })
export type PromptLabelParams = Static<typeof PromptLabelParamsSchema>

export const MoveLabelBodySchema = Type.Object({
  version: { ...VersionSchema, description: 'the version to point the label at' },
  expectedVersion: Type.Optional(
    Type.Union([VersionSchema, Type.Null()], {
      description: 'move only if the label points at this version now (null: only if it does not exist yet); otherwise 409',
    }),
  ),
})
export type MoveLabelBody = Static<typeof MoveLabelBodySchema>

export const MoveLabelResponseSchema = Type.Object({
  label: PromptLabelSchema,
  previousVersion: Type.Union([Type.Integer(), Type.Null()], { description: 'where the label pointed before; null if it did not exist' }),
  moved: Type.Boolean({ description: 'false when the label already pointed at the version (nothing recorded)' }),
})
export type MoveLabelResponse = Static<typeof MoveLabelResponseSchema>

export const LabelHistoryQuerySchema = Type.Object({
  ...ProjectScopeQuerySchema.properties,
  label: Type.Optional(LabelNameSchema),
  from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive: moves made at or after' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive: …made before' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'moves per page (1–200)' }),
  cursor: Type.Optional(Type.String({ maxLength: 40, description: 'nextCursor of the previous page' })),
})
export type LabelHistoryQuery = Static<typeof LabelHistoryQuerySchema>

const NullableVersion = Type.Union([Type.Integer(), Type.Null()])
const NullableString = Type.Union([Type.String(), Type.Null()])

export const LabelMoveSchema = Type.Object({
  id: Type.String(),
  label: Type.String(),
  fromVersion: { ...NullableVersion, description: 'null: the label did not exist before' },
  toVersion: { ...NullableVersion, description: 'null: the label was removed' },
  movedAt: IsoDateSchema,
  movedByKeyId: { ...NullableString, description: 'the API key that moved it; null for a move made by a person or outside the API' },
  movedByKeyPrefix: { ...NullableString, description: 'that key’s display prefix, as the key list shows it' },
  movedByUser: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()], { description: 'the signed-in person who moved it; null when a key did' }),
})
export type LabelMove = Static<typeof LabelMoveSchema>

export const LabelHistorySchema = Type.Object({
  moves: Type.Array(LabelMoveSchema, { description: 'newest first' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next (older) page; null on the last' }),
})
export type LabelHistory = Static<typeof LabelHistorySchema>
