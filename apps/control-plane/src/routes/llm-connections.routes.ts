import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sealSecret } from '@tracewell/auth'
import { createLlmConnection, deleteLlmConnection, findLlmConnection, listLlmConnections, LLM_CONNECTION_EXISTS, llmConnectionKeyContext } from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '@tracewell/http'
import { answeredMessage, LlmCallError, openConnection, outboundFailureMessage, unreachedMessage } from '@tracewell/llm-calls'
import { BaseUrlError, outboundErrorIn, type Outbound } from '@tracewell/outbound'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, IdSchema, LlmConnectionBodySchema, LlmConnectionSchema, type LlmConnectionTest, LlmConnectionTestSchema, ProjectScopeQuerySchema } from '@tracewell/api-schemas'

// A project's LLM connections (docs/api.md#llm-connections): the OpenAI-compatible endpoints its
// evaluators call. The API key is sealed before it is stored and never returned, only its last
// four characters; the evaluator worker opens it with the same LLM_CONNECTION_ENCRYPTION_KEY.
// Base URLs are checked by the outbound guard as they are saved (docs/operations.md#outbound-policy).

// Not a passing outage: a setting to add. A 503 still (the server cannot do it as configured),
// with an hour's Retry-After, which is what a restart with the setting takes at most.
const notConfigured = () => new ServiceUnavailableError('LLM connections need LLM_CONNECTION_ENCRYPTION_KEY set on the server, to keep their keys sealed', 3600)

// A person waits on the answer (the console's Test button), and a model list is small.
const connectionTestTimeoutMs = 15_000

export interface LlmConnectionRoutesOptions {
  /** LLM_CONNECTION_ENCRYPTION_KEY; without it no connection can be made (503). */
  encryptionKey: Buffer | undefined
  outbound: Outbound
}

async function checkedBaseUrl(outbound: Outbound, raw: string): Promise<string> {
  try {
    return await outbound.checkBaseUrl(raw)
  } catch (error) {
    if (error instanceof BaseUrlError) throw new BadRequestError(`body/baseUrl: ${error.message}`)
    throw error
  }
}

/** GET <baseUrl>/models with the connection's key, through the outbound guard. */
async function testConnection(outbound: Outbound, baseUrl: string, apiKey: string): Promise<LlmConnectionTest> {
  const started = performance.now()
  const latencyMs = () => Math.round(performance.now() - started)
  try {
    const response = await outbound.fetchWithin(connectionTestTimeoutMs)(`${baseUrl}/models`, { headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' } })
    // Only the status is answered: the body is not read.
    await response.body?.cancel()
    const message = response.ok ? `the endpoint answered ${response.status}: the connection works` : answeredMessage('the endpoint', response.status)
    return { ok: response.ok, status: response.status, latencyMs: latencyMs(), message }
  } catch (error) {
    const outboundError = outboundErrorIn(error)
    const message = outboundError === undefined ? unreachedMessage('the endpoint', error) : outboundFailureMessage('the endpoint', outboundError)
    return { ok: false, status: null, latencyMs: latencyMs(), message }
  }
}

const hintOf = (apiKey: string) => (apiKey.length >= 8 ? `…${apiKey.slice(-4)}` : '…')

/** GET/POST /api/llm-connections and DELETE /api/llm-connections/:connectionId (project key, or team key with project_id). */
export const llmConnectionRoutes: FastifyPluginAsyncTypebox<LlmConnectionRoutesOptions> = async (app, options) => {
  app.get(
    '/api/llm-connections',
    {
      onRequest: authorize,
      config: { permission: 'llm-connections:read' },
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
      onRequest: authorize,
      config: { permission: 'llm-connections:write' },
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
      const baseUrl = await checkedBaseUrl(options.outbound, request.body.baseUrl)
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

  app.post(
    '/api/llm-connections/:connectionId/test',
    {
      onRequest: authorize,
      config: { permission: 'llm-connections:write' },
      schema: {
        operationId: 'testLlmConnection',
        summary: 'Try an LLM connection: GET <baseUrl>/models with its key, through the outbound policy',
        description: 'Always 200 once the connection exists: ok=false with the reason when the address is refused, nothing answers, or the endpoint answers other than 2xx.',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: Type.Object({ connectionId: IdSchema }),
        querystring: ProjectScopeQuerySchema,
        response: { 200: LlmConnectionTestSchema, ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request) => {
      const key = options.encryptionKey
      if (key === undefined) throw notConfigured()
      const { connectionId } = request.params
      if ((await findLlmConnection(app.db, callerProjectId(request), connectionId)) === undefined) throw new NotFoundError('LLM connection not found')
      let connection
      try {
        connection = await openConnection(app.db, connectionId, key)
      } catch (error) {
        if (error instanceof LlmCallError) return { ok: false, status: null, latencyMs: 0, message: error.message }
        throw error
      }
      return testConnection(options.outbound, connection.baseUrl, connection.apiKey)
    },
  )

  app.delete(
    '/api/llm-connections/:connectionId',
    {
      onRequest: authorize,
      config: { permission: 'llm-connections:write' },
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
