import { Type, type Static, type TSchema } from '@sinclair/typebox'

// Shapes shared by several control-plane routes. Route-specific schemas live beside
// their routes.

export const MessageSchema = Type.Object({ message: Type.String() }, { description: 'what went wrong, and where' })
export type Message = Static<typeof MessageSchema>

/**
 * Response schemas for the error statuses a route can answer with; every route can also answer
 * 500 and, while the database cannot be reached, 503 with Retry-After.
 */
export function errorResponses<const Status extends number>(...statuses: Status[]): Record<Status | 500 | 503, typeof MessageSchema> {
  const responses = {} as Record<Status | 500 | 503, typeof MessageSchema>
  for (const status of [...statuses, 500 as const, 503 as const]) responses[status] = MessageSchema
  return responses
}

/** Ids are UUIDs by default, or ids carried over from Langtrace (INIT_PROJECT_ID). */
export const IdSchema = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '1–64 of A-Z a-z 0-9 _ -' })

/** The body that creates a named resource (a project, a promptset): same bounds for both. */
export const NamedResourceBodySchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
})
export type NamedResourceBody = Static<typeof NamedResourceBodySchema>

/** The project a team key or a person acts on (`?project_id=`); a project key implies its own (accounts/authorize.ts). */
export const ProjectScopeQuerySchema = Type.Object({
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key (a project key implies its own)' })),
})

export const IsoDateSchema = Type.String({ description: 'ISO 8601 date-time' })
const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) => Type.Union([schema, Type.Null()], options)

export const ProjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  teamId: Type.String(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})
export type Project = Static<typeof ProjectSchema>

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('project'), Type.Literal('team')]),
  prefix: Type.String({ description: 'the first characters of the key, to recognise it; never the secret' }),
  scopes: Nullable(Type.Array(Type.Union([Type.Literal('ingest'), Type.Literal('read'), Type.Literal('write')])), {
    description: 'a project key’s scopes (docs/permissions.md); null: a team key, or a key made before scopes, which keeps every right it had',
  }),
  createdBy: Nullable(Type.Object({ id: Type.String(), name: Type.String(), email: Type.String() }), { description: 'the person who made it; null when a key or the bootstrap did' }),
  createdAt: IsoDateSchema,
  expiresAt: Nullable(IsoDateSchema, { description: 'when it stops working; null: never' }),
  lastUsedAt: Nullable(IsoDateSchema),
  revokedAt: Nullable(IsoDateSchema),
})
export type ApiKey = Static<typeof ApiKeySchema>

export const NewSecretSchema = Type.Object({ apiKey: Type.String({ description: 'the secret, shown only in this response' }) })
export type NewSecret = Static<typeof NewSecretSchema>

/**
 * A prompt label's name. `.` and `..` match the character class but are refused: clients resolve
 * them away as URL path segments, so such a label could never be moved or removed.
 */
export const LabelNameSchema = Type.String({
  pattern: '^(?!\\.\\.?$)[a-z0-9_.-]{1,36}$',
  description: '1–36 of a-z 0-9 _ . - (not "." or ".."); `production` is the version served by default',
})

/** A prompt as GET /api/promptset returns it (docs/api.md#get-a-prompt): the Langtrace SDKs' shape, nothing more. */
export const PromptSchema = Type.Object({
  id: Type.String(),
  value: Type.String(),
  variables: Type.Array(Type.String()),
  model: Type.String(),
  modelSettings: Type.Record(Type.String(), Type.Unknown()),
  version: Type.Integer(),
  live: Type.Boolean({ description: 'whether the production label points at this version' }),
  tags: Type.Array(Type.String()),
  spanId: Nullable(Type.String()),
  note: Type.String(),
  promptsetId: Type.String(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})
export type Prompt = Static<typeof PromptSchema>

const promptsetFields = {
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  projectId: Type.String(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
}

/** A promptset without its prompts. */
export const PromptsetSchema = Type.Object(promptsetFields)
export type Promptset = Static<typeof PromptsetSchema>

/** A promptset with the prompt selected by GET /api/promptset. */
export const PromptsetWithPromptsSchema = Type.Object({ ...promptsetFields, prompts: Type.Array(PromptSchema) })
export type PromptsetWithPrompts = Static<typeof PromptsetWithPromptsSchema>

/** A prompt version as the management API shows it: with the labels pointing at it. */
export const PromptWithLabelsSchema = Type.Composite([
  PromptSchema,
  Type.Object({ labels: Type.Array(Type.String(), { description: 'the labels pointing at this version, by name' }) }),
])
export type PromptWithLabels = Static<typeof PromptWithLabelsSchema>

/** A promptset with every version and its labels. */
export const PromptsetWithLabelsSchema = Type.Object({ ...promptsetFields, prompts: Type.Array(PromptWithLabelsSchema) })
export type PromptsetWithLabels = Static<typeof PromptsetWithLabelsSchema>
