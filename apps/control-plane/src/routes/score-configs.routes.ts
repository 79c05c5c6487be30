import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createScoreConfig, deleteScoreConfig, listScoreConfigs, SCORE_CONFIG_EXISTS } from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, IdSchema, ProjectScopeQuerySchema, type ScoreConfigBody, ScoreConfigBodySchema, ScoreConfigSchema } from '@tracewell/api-schemas'

// A project's score configurations: scores of a configured name must fit its type and range or
// categories, and the console offers an input for each (docs/api.md#score-configurations).

const isUniqueViolation = (error: unknown) =>
  (error as { code?: unknown }).code === '23505' && (error as { constraint?: unknown }).constraint === SCORE_CONFIG_EXISTS

function checkConfig(body: ScoreConfigBody): void {
  const { dataType, minValue, maxValue, categories } = body
  if (dataType !== 'numeric' && (minValue !== undefined || maxValue !== undefined)) {
    throw new BadRequestError(`body/${minValue !== undefined ? 'minValue' : 'maxValue'}: only a numeric score has a range`)
  }
  if (minValue !== undefined && maxValue !== undefined && minValue > maxValue) throw new BadRequestError('body/minValue: must not be above maxValue')
  if (dataType === 'categorical' && categories === undefined) throw new BadRequestError('body/categories: required for a categorical score')
  if (dataType !== 'categorical' && categories !== undefined) throw new BadRequestError('body/categories: only a categorical score has categories')
  const labels = new Set<string>()
  for (const [index, { label }] of (categories ?? []).entries()) {
    if (labels.has(label)) throw new BadRequestError(`body/categories/${index}/label: ${JSON.stringify(label)} appears twice`)
    labels.add(label)
  }
}

/** GET/POST /api/score-configs and DELETE /api/score-configs/:configId (project key, or team key with project_id). */
export const scoreConfigRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/score-configs',
    {
      onRequest: authorize,
      config: { permission: 'scores:read' },
      schema: {
        operationId: 'listScoreConfigs',
        summary: 'The project’s score configurations, by name',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ scoreConfigs: Type.Array(ScoreConfigSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ({ scoreConfigs: await listScoreConfigs(app.db, callerProjectId(request)) }),
  )

  app.post(
    '/api/score-configs',
    {
      onRequest: authorize,
      config: { permission: 'scores:write' },
      schema: {
        operationId: 'createScoreConfig',
        summary: 'Configure a score: its type, and its range or categories',
        description: 'From then on, scores of this name are checked against it; scores given before keep their values.',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        body: ScoreConfigBodySchema,
        response: { 201: ScoreConfigSchema, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      checkConfig(request.body)
      try {
        const config = await createScoreConfig(app.db, { projectId: callerProjectId(request), ...request.body })
        return reply.code(201).send(config)
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError(`The score ${JSON.stringify(request.body.name)} is configured already`)
        throw error
      }
    },
  )

  app.delete(
    '/api/score-configs/:configId',
    {
      onRequest: authorize,
      config: { permission: 'scores:write' },
      schema: {
        operationId: 'deleteScoreConfig',
        summary: 'Delete a score configuration (its scores stay)',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        params: Type.Object({ configId: IdSchema }),
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteScoreConfig(app.db, callerProjectId(request), request.params.configId))) throw new NotFoundError('Score configuration not found')
      return reply.code(204).send(null)
    },
  )
}
