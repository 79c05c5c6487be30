import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sealSecret } from '@tracewell/auth'
import { createLlmConnection, deleteLlmConnection, listLlmConnections, LLM_CONNECTION_EXISTS, llmConnectionKeyContext } from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '@tracewell/http'
import { callerProjectId, requireProjectAccess, requireSpendAccess } from '../auth.ts'
import { errorResponses, IdSchema, IsoDateSchema } from '../schemas.ts'
import { ProjectScopeQuerySchema } from './trace-queries.routes.ts'

// A project's LLM connections (docs/api.md#llm-connections): the OpenAI-compatible endpoints its
// evaluators call. The API key is sealed before it is stored and never returned, only its last
// four characters; the evaluator worker opens it with the same LLM_CONNECTION_ENCRYPTION_KEY.

// Not a passing outage: a setting to add. A 503 still (the server cannot do it as configured),
// with an hour's Retry-After, which is what a restart with the setting takes at most.
const notConfigured = () => new ServiceUnavailableError('LLM connections need LLM_CONNECTION_ENCRYPTION_KEY set on the server, to keep their keys sealed', 3600)

export const LlmConnectionSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  provider: Type.Literal('openai'),
  baseUrl: Type.String(),
  apiKeyHint: Type.String({ description: 'the last four characters of the key, to recognise it; the key itself is never returned' }),
  createdAt: IsoDateSchema,
})

const LlmConnectionBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    provider: Type.Literal('openai', { description: 'openai: the OpenAI chat completions API, or any endpoint that speaks it (vLLM, Ollama, LiteLLM, Azure’s /openai/v1, …)' }),
    baseUrl: Type.String({ minLength: 1, maxLength: 2000, description: 'the API’s base URL, e.g. https://api.openai.com/v1 (chat completions are POSTed to <baseUrl>/chat/completions)' }),
    apiKey: Type.String({ minLength: 1, maxLength: 2000, description: 'sent as `Authorization: Bearer <apiKey>`; stored sealed (AES-256-GCM), never returned' }),
  },
  { additionalProperties: false },
)

export interface LlmConnectionRoutesOptions {
  /** LLM_CONNECTION_ENCRYPTION_KEY; without it no connection can be made (503). */
  encryptionKey: Buffer | undefined
}

function checkBaseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new BadRequestError(`body/baseUrl: not a URL: ${JSON.stringify(raw)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequestError(`body/baseUrl: must be http:// or https://, got ${url.protocol}`)
  if (url.username !== '' || url.password !== '') throw new BadRequestError('body/baseUrl: must not hold credentials; send the key as apiKey')
  return raw.replace(/\/+$/, '')
}

const hintOf = (apiKey: string) => (apiKey.length >= 8 ? `…${apiKey.slice(-4)}` : '…')

/** GET/POST /api/llm-connections and DELETE /api/llm-connections/:connectionId (project key, or team key with project_id). */
export const llmConnectionRoutes: FastifyPluginAsyncTypebox<LlmConnectionRoutesOptions> = async (app, options) => {
  app.get(
    '/api/llm-connections',
    {
      onRequest: requireProjectAccess,
      schema: {
        operationId: 'listLlmConnections',
        summary: 'The project’s LLM connections (without their keys)',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ llmConnections: Type.Array(LlmConnectionSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ({ llmConnections: await listLlmConnections(app.db, callerProjectId(request)) }),
  )

  app.post(
    '/api/llm-connections',
    {
      onRequest: requireSpendAccess,
      config: { spends: 'Creating LLM connections' },
      schema: {
        operationId: 'createLlmConnection',
        summary: 'Connect an OpenAI-compatible endpoint for evaluators; its key is stored sealed',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        body: LlmConnectionBodySchema,
        response: { 201: LlmConnectionSchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request, reply) => {
      const key = options.encryptionKey
      if (key === undefined) throw notConfigured()
      const projectId = callerProjectId(request)
      const { name, provider, apiKey } = request.body
      const baseUrl = checkBaseUrl(request.body.baseUrl)
      try {
        const connection = await createLlmConnection(app.db, {
          projectId,
          name,
          provider,
          baseUrl,
          apiKeySealed: sealSecret(apiKey, key, llmConnectionKeyContext(projectId)),
          apiKeyHint: hintOf(apiKey),
        })
        return reply.code(201).send(connection)
      } catch (error) {
        if ((error as { constraint?: unknown }).constraint === LLM_CONNECTION_EXISTS) throw new ConflictError(`An LLM connection named ${JSON.stringify(name)} exists already`)
        throw error
      }
    },
  )

  app.delete(
    '/api/llm-connections/:connectionId',
    {
      onRequest: requireSpendAccess,
      config: { spends: 'Deleting LLM connections' },
      schema: {
        operationId: 'deleteLlmConnection',
        summary: 'Delete an LLM connection no evaluator uses',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: Type.Object({ connectionId: IdSchema }),
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const outcome = await deleteLlmConnection(app.db, callerProjectId(request), request.params.connectionId)
      if (outcome === 'missing') throw new NotFoundError('LLM connection not found')
      if (outcome === 'in_use') throw new ConflictError('An evaluator uses this LLM connection: delete the evaluator first')
      return reply.code(204).send(null)
    },
  )
}
