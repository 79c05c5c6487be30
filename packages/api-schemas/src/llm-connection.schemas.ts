import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of a project's LLM connections (docs/api.md#llm-connections): the API key is never answered, only its last four characters.

export const LlmConnectionSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  provider: Type.Literal('openai'),
  baseUrl: Type.String(),
  apiKeyHint: Type.String({ description: 'the last four characters of the key, to recognise it; the key itself is never returned' }),
  createdAt: IsoDateSchema,
})

export const LlmConnectionBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    provider: Type.Literal('openai', { description: 'openai: the OpenAI chat completions API, or any endpoint that speaks it (vLLM, Ollama, LiteLLM, Azure’s /openai/v1, …)' }),
    baseUrl: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'the API’s base URL, e.g. https://api.openai.com/v1: scheme, host, port and path, without query, fragment or credentials; its host must resolve to addresses the outbound policy allows (chat completions are POSTed to <baseUrl>/chat/completions)',
    }),
    apiKey: Type.String({ minLength: 1, maxLength: 2000, description: 'sent as `Authorization: Bearer <apiKey>`; stored sealed (AES-256-GCM), never returned' }),
  },
  { additionalProperties: false },
)

export const LlmConnectionTestSchema = Type.Object({
  ok: Type.Boolean({ description: 'the endpoint answered GET <baseUrl>/models with a 2xx' }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'the status it answered; null when it was refused by the outbound policy or not reached' }),
  latencyMs: Type.Integer(),
  message: Type.String({ description: 'what happened, in Tracewell’s words (nothing of the endpoint’s reply beyond its status)' }),
})
export type LlmConnectionTest = Static<typeof LlmConnectionTestSchema>
