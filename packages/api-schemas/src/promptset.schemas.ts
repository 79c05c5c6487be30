import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, type NamedResourceBody, NamedResourceBodySchema, PromptsetSchema, PromptWithLabelsSchema } from './common.schemas.ts'

// The shapes of the prompt registry routes (docs/prompts.md); a prompt's own shape is PromptSchema (common.schemas.ts).

export const CreatePromptsetBodySchema = NamedResourceBodySchema
export type CreatePromptsetBody = NamedResourceBody

export const PromptsetListSchema = Type.Object({ promptsets: Type.Array(PromptsetSchema) })
export type PromptsetList = Static<typeof PromptsetListSchema>

export const PromptsetParamsSchema = Type.Object({ promptsetId: IdSchema })
export type PromptsetParams = Static<typeof PromptsetParamsSchema>

const VariableNameSchema = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$', maxLength: 200, description: 'a placeholder name' })

export const CreatePromptBodySchema = Type.Object({
  value: Type.String({ minLength: 1, description: 'the prompt text; placeholders are ${name}, {{name}} or {name}' }),
  model: Type.String({ minLength: 1, maxLength: 200 }),
  modelSettings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })),
  note: Type.Optional(Type.String({ maxLength: 10_000 })),
  spanId: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  variables: Type.Optional(
    Type.Array(VariableNameSchema, { uniqueItems: true, maxItems: 200, description: 'when omitted, the placeholder names found in value' }),
  ),
  live: Type.Optional(Type.Boolean({ description: 'point the production label at this version, in the same transaction' })),
})
export type CreatePromptBody = Static<typeof CreatePromptBodySchema>

export const SetLiveBodySchema = Type.Object({
  version: Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()], {
    description: 'the version to point the production label at, or null to remove the label',
  }),
})
export type SetLiveBody = Static<typeof SetLiveBodySchema>

export const LiveResponseSchema = Type.Object({ live: Type.Union([PromptWithLabelsSchema, Type.Null()]) })
export type LiveResponse = Static<typeof LiveResponseSchema>
