import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createPromptset, createPromptVersion, listProjectPromptsets, listPrompts, setLiveVersion } from '@tracewell/db'
import { NotFoundError } from '@tracewell/http'
import { callerActor, callerProjectId } from '../auth.ts'
import { authorize, requirePermission } from '../accounts/authorize.ts'
import { ownedPromptset } from '../owned-promptset.ts'
import type { PromptCache } from '../prompt-cache.ts'
import { extractVariables } from '@tracewell/llm-messages'
import { CreatePromptBodySchema, CreatePromptsetBodySchema, errorResponses, LiveResponseSchema, ProjectScopeQuerySchema, PromptsetListSchema, PromptsetParamsSchema, PromptsetSchema, PromptWithLabelsSchema, PromptsetWithLabelsSchema, SetLiveBodySchema } from '@tracewell/api-schemas'

export interface PromptsetRoutesOptions {
  /** Dropped for a promptset whenever one of its prompts or labels changes here. */
  promptCache: PromptCache
}

/** Promptsets and their versions (project key). Labels have routes of their own. */
export const promptsetRoutes: FastifyPluginAsyncTypebox<PromptsetRoutesOptions> = async (app, { promptCache }) => {
  const tags = ['prompt registry']
  const security = [{ apiKey: [] }]

  app.post(
    '/api/promptsets',
    {
      onRequest: authorize,
      config: { permission: 'prompts:write' },
      schema: {
        operationId: 'createPromptset',
        querystring: ProjectScopeQuerySchema,
        summary: 'Create a prompt registry',
        tags,
        security,
        body: CreatePromptsetBodySchema,
        response: { 201: PromptsetSchema, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { name, description } = request.body
      const promptset = await createPromptset(app.db, { projectId: callerProjectId(request), name, ...(description === undefined ? {} : { description }) })
      // A lookup of this id may have been cached as "not found" just before.
      promptCache.invalidate(promptset.id)
      return reply.code(201).send(promptset)
    },
  )

  app.get(
    '/api/promptsets',
    {
      onRequest: authorize,
      config: { permission: 'prompts:read' },
      schema: { operationId: 'listPromptsets', summary: 'List the project’s prompt registries', tags, querystring: ProjectScopeQuerySchema, security, response: { 200: PromptsetListSchema, ...errorResponses(401) } },
    },
    async (request) => ({ promptsets: await listProjectPromptsets(app.db, callerProjectId(request)) }),
  )

  app.get(
    '/api/promptsets/:promptsetId',
    {
      onRequest: authorize,
      config: { permission: 'prompts:read' },
      schema: {
        operationId: 'getPromptset',
        querystring: ProjectScopeQuerySchema,
        summary: 'A prompt registry with every version of its prompt, and each version’s labels',
        tags,
        security,
        params: PromptsetParamsSchema,
        response: { 200: PromptsetWithLabelsSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      return { ...promptset, prompts: await listPrompts(app.db, promptset.id) }
    },
  )

  app.post(
    '/api/promptsets/:promptsetId/prompts',
    {
      onRequest: authorize,
      config: { permission: 'prompts:write' },
      schema: {
        operationId: 'createPromptVersion',
        querystring: ProjectScopeQuerySchema,
        summary: 'Add the next version of the registry’s prompt',
        description: 'version is the previous highest + 1, also under concurrent creates.',
        tags,
        security,
        params: PromptsetParamsSchema,
        body: CreatePromptBodySchema,
        response: { 201: PromptWithLabelsSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      const body = request.body
      // A version made live moves the production label: that needs what moving it needs.
      if (body.live === true) await requirePermission(request, 'prompts:label-production')
      const prompt = await createPromptVersion(app.db, {
        promptsetId: promptset.id,
        value: body.value,
        variables: body.variables ?? extractVariables(body.value),
        model: body.model,
        modelSettings: body.modelSettings ?? {},
        tags: body.tags ?? [],
        note: body.note ?? '',
        spanId: body.spanId ?? null,
        live: body.live ?? false,
        movedBy: callerActor(request),
      })
      promptCache.invalidate(promptset.id)
      return reply.code(201).send(prompt)
    },
  )

  app.put(
    '/api/promptsets/:promptsetId/live',
    {
      onRequest: authorize,
      config: { permission: 'prompts:label-production' },
      schema: {
        operationId: 'setLivePromptVersion',
        querystring: ProjectScopeQuerySchema,
        summary: 'Make one version live (or none, with null): move (or remove) the production label',
        description:
          'Kept for the clients of the live flag; the same as PUT /api/promptsets/{promptsetId}/labels/production ' +
          '(or DELETE, for null), and recorded in the label history likewise.',
        tags,
        security,
        params: PromptsetParamsSchema,
        body: SetLiveBodySchema,
        response: { 200: LiveResponseSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      const { version } = request.body
      const result = await setLiveVersion(app.db, promptset.id, version, callerActor(request))
      if (result.kind === 'version-not-found') throw new NotFoundError(`Prompt version ${version} not found`)
      promptCache.invalidate(promptset.id)
      return { live: result.live }
    },
  )
}
