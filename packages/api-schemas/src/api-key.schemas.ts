import { Type, type Static } from '@sinclair/typebox'
import { keyScopes } from '@tracewell/policy'
import { ApiKeySchema, IdSchema } from './common.schemas.ts'

// The shapes of the API key routes (docs/api.md#api-keys); a key's own shape is ApiKeySchema (common.schemas.ts).

export const KeyScopeQuerySchema = Type.Object({
  project_id: Type.Optional({ ...IdSchema, description: 'a project of the caller’s team: its project keys' }),
  team_id: Type.Optional({ ...IdSchema, description: 'the caller’s team: its team keys' }),
})
export type KeyScopeQuery = Static<typeof KeyScopeQuerySchema>

export const CreateApiKeyBodySchema = Type.Object(
  {
    scopes: Type.Optional(
      Type.Array(Type.Union(keyScopes.map((scope) => Type.Literal(scope))), {
        minItems: 1,
        maxItems: keyScopes.length,
        uniqueItems: true,
        description: 'project keys only: ingest (send traces and feedback), read (queries, prompts), write (what a member may do through the API); default all three',
      }),
    ),
    expiresAt: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601, in the future: the key stops working then; default never' })),
  },
  { additionalProperties: false },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>

export const ApiKeyListSchema = Type.Object({ apiKeys: Type.Array(ApiKeySchema) })
export type ApiKeyList = Static<typeof ApiKeyListSchema>

export const ApiKeyParamsSchema = Type.Object({ id: IdSchema })
export type ApiKeyParams = Static<typeof ApiKeyParamsSchema>

export const RevokeApiKeyQuerySchema = Type.Object({
  project_id: Type.Optional({ ...IdSchema, description: 'the key’s project: revoking a project key needs keys:manage on it; without, team-keys:manage' }),
})
export type RevokeApiKeyQuery = Static<typeof RevokeApiKeyQuerySchema>
