import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, LabelNameSchema } from './common.schemas.ts'

// The shapes of the playground (docs/api.md#playground): a run's request and its answer.

const PlaygroundMessageSchema = Type.Object(
  {
    role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String({ maxLength: 200_000 }),
  },
  { additionalProperties: false },
)

export const PlaygroundRunBodySchema = Type.Object(
  {
    connectionId: IdSchema,
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default: the prompt version’s model (required with messages)' })),
    messages: Type.Optional(Type.Array(PlaygroundMessageSchema, { minItems: 1, maxItems: 200, description: 'messages written by hand; {{name}} placeholders are filled from variables' })),
    promptsetId: Type.Optional({ ...IdSchema, description: 'or a prompt version: its registry…' }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: '…and version (or label; neither: production)' })),
    label: Type.Optional(LabelNameSchema),
    variables: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.String({ maxLength: 200_000 }))),
    modelSettings: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'over the prompt version’s own: temperature, max_tokens, …' })),
    stream: Type.Optional(Type.Boolean({ description: 'answer as server-sent events: {type:"text", text} as the answer comes, then {type:"done", …the run}' })),
  },
  { additionalProperties: false },
)
export type PlaygroundRunBody = Static<typeof PlaygroundRunBodySchema>

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const PlaygroundRunSchema = Type.Object({
  traceId: Type.String({ description: 'the run’s trace' }),
  messages: Type.Array(PlaygroundMessageSchema, { description: 'what was sent, variables filled' }),
  output: Type.String(),
  toolCalls: Type.Array(Type.Object({ name: Type.String(), arguments: Type.String(), id: Type.Optional(Type.String()) })),
  error: Nullable(Type.String({ description: 'why the model gave no answer; null when it did' })),
  model: Type.String({ description: 'the model that answered (or was asked)' }),
  inputTokens: Nullable(Type.Integer()),
  outputTokens: Nullable(Type.Integer()),
  costUsd: Nullable(Type.Number()),
  latencyMs: Type.Integer(),
  firstTokenMs: Nullable(Type.Integer({ description: 'streamed: the time to the first text' })),
})
export type PlaygroundRun = Static<typeof PlaygroundRunSchema>
