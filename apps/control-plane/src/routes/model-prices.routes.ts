import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createModelPrice, deleteModelPrice, listModelPrices, MODEL_PRICE_EXISTS, updateModelPrice, type NewModelPrice } from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import { globProblem } from '@tracewell/llm-usage'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, type ModelPriceBody, ModelPriceBodySchema, ModelPriceListSchema, ModelPriceParamsSchema, ModelPriceSchema, ProjectParamsSchema } from '@tracewell/api-schemas'
import { parseIsoDate } from './trace-queries.routes.ts'

// A project's own model prices (self-hosted, fine-tuned and local models), managed with the team
// key like the project's other settings. The writer applies them within MODEL_PRICE_CACHE_TTL_MS
// (10 s) to spans stored from then on; spans already stored keep the cost they were stored with.

const isUniqueViolation = (error: unknown) =>
  (error as { code?: unknown }).code === '23505' && (error as { constraint?: unknown }).constraint === MODEL_PRICE_EXISTS

/** The body as stored: match defaulted, a glob checked, the date parsed. */
function priceOf(projectId: string, body: ModelPriceBody): NewModelPrice {
  const match = body.match ?? 'exact'
  const problem = match === 'glob' ? globProblem(body.model) : null
  if (problem !== null) throw new BadRequestError(`body/model: ${problem}`)
  const effectiveFrom = body.effectiveFrom === null ? undefined : parseIsoDate('effectiveFrom', body.effectiveFrom, 'body')
  return { projectId, model: body.model, match, usdPerMillionTokens: body.usdPerMillionTokens, effectiveFrom: effectiveFrom ?? null }
}

function conflictOr(error: unknown, price: NewModelPrice): unknown {
  return isUniqueViolation(error) ? new ConflictError(`A ${price.match} price for ${JSON.stringify(price.model)} with this effective date already exists`) : error
}

/** GET/POST /api/projects/:projectId/model-prices and PUT/DELETE …/:priceId (settings:read, settings:write). */
export const modelPriceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/projects/:projectId/model-prices',
    {
      onRequest: authorize,
      config: { permission: 'settings:read' },
      schema: {
        operationId: 'listModelPrices',
        summary: 'List a project’s own model prices, newest first',
        tags: ['model prices'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        response: { 200: ModelPriceListSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ modelPrices: await listModelPrices(app.db, callerProjectId(request)) }),
  )

  app.post(
    '/api/projects/:projectId/model-prices',
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'createModelPrice',
        summary: 'Price a model for this project',
        description:
          'Spans of the project whose model matches are priced with it instead of the built-in price table. An exact name wins over a pattern; among prices in force, the latest effective date wins.',
        tags: ['model prices'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        body: ModelPriceBodySchema,
        response: { 201: ModelPriceSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const price = priceOf(callerProjectId(request), request.body)
      try {
        return reply.code(201).send(await createModelPrice(app.db, price))
      } catch (error) {
        throw conflictOr(error, price)
      }
    },
  )

  app.put(
    '/api/projects/:projectId/model-prices/:priceId',
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'updateModelPrice',
        summary: 'Change one of a project’s model prices',
        description:
          'Replaces the price’s fields with the body (as POST takes it; omitted optional fields become their defaults). Spans stored from then on are priced with it; spans already stored keep their cost.',
        tags: ['model prices'],
        security: [{ apiKey: [] }],
        params: ModelPriceParamsSchema,
        body: ModelPriceBodySchema,
        response: { 200: ModelPriceSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const price = priceOf(callerProjectId(request), request.body)
      try {
        const updated = await updateModelPrice(app.db, request.params.priceId, price)
        if (updated === undefined) throw new NotFoundError('Model price not found')
        return updated
      } catch (error) {
        throw conflictOr(error, price)
      }
    },
  )

  app.delete(
    '/api/projects/:projectId/model-prices/:priceId',
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'deleteModelPrice',
        summary: 'Delete one of a project’s model prices',
        tags: ['model prices'],
        security: [{ apiKey: [] }],
        params: ModelPriceParamsSchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const projectId = callerProjectId(request)
      if (!(await deleteModelPrice(app.db, projectId, request.params.priceId))) throw new NotFoundError('Model price not found')
      return reply.code(204).send(null)
    },
  )
}
