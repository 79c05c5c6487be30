import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  findAnnotationQueue,
  createEvaluatorRun,
  createEvaluator,
  deleteEvaluator,
  EVALUATOR_EXISTS,
  evaluatorStats,
  findEvaluatorRun,
  findEvaluator,
  findLlmConnection,
  findPromptByPromptsetName,
  listJudgments,
  listEvaluatorRuns,
  listEvaluators,
  setEvaluatorEnabled,
  type EvaluatorDto,
  type EvaluatorStats,
  type TraceFilterParams,
} from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, type EvaluatorBody, EvaluatorBodySchema, EvaluatorParamsSchema, EvaluatorSchema, IdSchema, JudgmentSchema, ProjectScopeQuerySchema, RunSchema } from '@tracewell/api-schemas'
import { parseIsoDate } from './trace-queries.routes.ts'
import { checkTraceFilter } from './trace-filter-body.ts'
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from './created-at-cursor.ts'
import { timeWindow } from './query-bounds.ts'

// Evaluators: LLM judges of a project's traces (docs/api.md#llm-as-judge-evaluators). The
// evaluator worker (apps/evaluator) judges each new trace that matches the filter once it is
// complete, and the traces of a time range on demand (runs); each judgment is a score of source
// `eval` with the judge's reasoning as its comment, and a row here with its status, error, tokens
// and cost.

function withStats(evaluator: EvaluatorDto, stats: EvaluatorStats | undefined) {
  const s = stats ?? { pending: 0, completed: 0, failed: 0, skipped: 0, inputTokens: 0, outputTokens: 0, costUsd: null }
  return {
    ...evaluator,
    filter: evaluator.filter as Record<string, unknown>,
    judgments: { pending: s.pending, completed: s.completed, failed: s.failed, skipped: s.skipped },
    judge: { inputTokens: s.inputTokens, outputTokens: s.outputTokens, costUsd: s.costUsd },
  }
}

/** The template must show the judge something of the trace. */
const showsTrace = (template: string) => /\{\{\s*(input|output)\s*\}\}/.test(template)

// A judgment's id, as the cursor of the judgments list carries it.
const judgmentIdPattern = /^[A-Za-z0-9_-]{1,64}$/

/** Evaluators, their runs and judgments (project key, or team key with project_id). */
export const evaluatorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function ownedEvaluator(projectId: string, evaluatorId: string): Promise<EvaluatorDto> {
    const evaluator = await findEvaluator(app.db, projectId, evaluatorId)
    if (evaluator === undefined) throw new NotFoundError('Evaluator not found')
    return evaluator
  }

  async function checkPrompt(projectId: string, prompt: EvaluatorBody['prompt']): Promise<{ prompt: string | null; promptRef: { name: string; label: string } | null }> {
    if (typeof prompt === 'string') {
      if (!showsTrace(prompt)) throw new BadRequestError('body/prompt: the template shows the judge neither {{input}} nor {{output}}')
      return { prompt, promptRef: null }
    }
    const label = prompt.label ?? 'production'
    const found = await findPromptByPromptsetName(app.db, projectId, prompt.name, label)
    if (found === undefined) throw new BadRequestError(`body/prompt: no prompt registry ${JSON.stringify(prompt.name)} with a version labelled ${JSON.stringify(label)}`)
    if (!showsTrace(found.value)) throw new BadRequestError(`body/prompt: the ${label} version of ${JSON.stringify(prompt.name)} shows the judge neither {{input}} nor {{output}}`)
    return { prompt: null, promptRef: { name: prompt.name, label } }
  }

  app.post(
    '/api/evaluators',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:write' },
      schema: {
        operationId: 'createEvaluator',
        summary: 'Judge the project’s new traces with an LLM: each judgment becomes a score',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        body: EvaluatorBodySchema,
        response: { 201: EvaluatorSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const projectId = callerProjectId(request)
      const body = request.body
      if ((await findLlmConnection(app.db, projectId, body.connectionId)) === undefined) throw new BadRequestError(`body/connectionId: no LLM connection ${JSON.stringify(body.connectionId)} in this project`)
      const filter = (body.filter ?? {}) as TraceFilterParams
      checkTraceFilter(filter)
      const prompt = await checkPrompt(projectId, body.prompt)
      if (body.reviewQueue !== undefined && (await findAnnotationQueue(app.db, projectId, body.reviewQueue.queueId)) === undefined) {
        throw new BadRequestError(`body/reviewQueue/queueId: the project has no annotation queue ${body.reviewQueue.queueId}`)
      }
      try {
        let evaluator = await createEvaluator(app.db, {
          projectId,
          name: body.name,
          connectionId: body.connectionId,
          model: body.model,
          ...prompt,
          scoreName: body.scoreName,
          filter,
          samplingRate: body.samplingRate ?? 1,
          reviewQueue: body.reviewQueue ?? null,
        })
        if (body.enabled === false) evaluator = (await setEvaluatorEnabled(app.db, projectId, evaluator.id, false)) ?? evaluator
        return reply.code(201).send(withStats(evaluator, undefined))
      } catch (error) {
        if ((error as { constraint?: unknown }).constraint === EVALUATOR_EXISTS) throw new ConflictError(`An evaluator named ${JSON.stringify(body.name)} exists already`)
        throw error
      }
    },
  )

  app.get(
    '/api/evaluators',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:read' },
      schema: {
        operationId: 'listEvaluators',
        summary: 'The project’s evaluators with their judgments by status, tokens and cost',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ evaluators: Type.Array(EvaluatorSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const evaluators = await listEvaluators(app.db, callerProjectId(request))
      const stats = await evaluatorStats(app.db, evaluators.map((evaluator) => evaluator.id))
      return { evaluators: evaluators.map((evaluator) => withStats(evaluator, stats.get(evaluator.id))) }
    },
  )

  app.get(
    '/api/evaluators/:evaluatorId',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:read' },
      schema: {
        operationId: 'getEvaluator',
        summary: 'One evaluator with its judgments by status, tokens and cost',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: EvaluatorParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: EvaluatorSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const evaluator = await ownedEvaluator(callerProjectId(request), request.params.evaluatorId)
      return withStats(evaluator, (await evaluatorStats(app.db, [evaluator.id])).get(evaluator.id))
    },
  )

  app.patch(
    '/api/evaluators/:evaluatorId',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:write' },
      schema: {
        operationId: 'updateEvaluator',
        summary: 'Pause or resume judging new traces',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: EvaluatorParamsSchema,
        querystring: ProjectScopeQuerySchema,
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: EvaluatorSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const evaluator = await setEvaluatorEnabled(app.db, callerProjectId(request), request.params.evaluatorId, request.body.enabled)
      if (evaluator === undefined) throw new NotFoundError('Evaluator not found')
      return withStats(evaluator, (await evaluatorStats(app.db, [evaluator.id])).get(evaluator.id))
    },
  )

  app.delete(
    '/api/evaluators/:evaluatorId',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:write' },
      schema: {
        operationId: 'deleteEvaluator',
        summary: 'Delete an evaluator with its runs and judgments (the scores it gave stay)',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: EvaluatorParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteEvaluator(app.db, callerProjectId(request), request.params.evaluatorId))) throw new NotFoundError('Evaluator not found')
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/evaluators/:evaluatorId/runs',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:write' },
      schema: {
        operationId: 'createEvaluationRun',
        summary: 'Judge every trace of a time range that matches the evaluator’s filter',
        description: 'Answered at once (202); the worker starts the run within EVALUATOR_POLL_INTERVAL_MS. A trace judged before is judged again, its score replaced.',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: EvaluatorParamsSchema,
        querystring: ProjectScopeQuerySchema,
        body: Type.Object(
          { from: Type.String({ description: 'ISO 8601: traces starting at or after' }), to: Type.String({ description: 'ISO 8601: traces starting before' }) },
          { additionalProperties: false },
        ),
        response: { 202: RunSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const projectId = callerProjectId(request)
      const evaluator = await ownedEvaluator(projectId, request.params.evaluatorId)
      const from = parseIsoDate('from', request.body.from, 'body') as Date
      const to = parseIsoDate('to', request.body.to, 'body') as Date
      if (from >= to) throw new BadRequestError('body/from: must be before to')
      return reply.code(202).send(await createEvaluatorRun(app.db, { projectId, evaluatorId: evaluator.id, from, to }))
    },
  )

  app.get(
    '/api/evaluators/:evaluatorId/runs',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:read' },
      schema: {
        operationId: 'listEvaluationRuns',
        summary: 'An evaluator’s on-demand runs, newest first (the last 100)',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: EvaluatorParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ runs: Type.Array(RunSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const evaluator = await ownedEvaluator(projectId, request.params.evaluatorId)
      return { runs: await listEvaluatorRuns(app.db, projectId, evaluator.id) }
    },
  )

  app.get(
    '/api/evaluators/:evaluatorId/runs/:runId',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:read' },
      schema: {
        operationId: 'getEvaluationRun',
        summary: 'One run: its status and its judgments by status',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: Type.Object({ evaluatorId: IdSchema, runId: IdSchema }),
        querystring: ProjectScopeQuerySchema,
        response: { 200: RunSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const run = await findEvaluatorRun(app.db, callerProjectId(request), request.params.evaluatorId, request.params.runId)
      if (run === undefined) throw new NotFoundError('Run not found')
      return run
    },
  )

  app.get(
    '/api/evaluators/:evaluatorId/judgments',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:read' },
      schema: {
        operationId: 'listJudgments',
        summary: 'An evaluator’s judgments, newest first: status, error, tokens, cost, the score given',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        params: EvaluatorParamsSchema,
        querystring: Type.Object({
          project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
          status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('skipped')])),
          run_id: Type.Optional(IdSchema),
          from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive: judgments made at or after' })),
          to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive: …made before' })),
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
          cursor: Type.Optional(Type.String({ maxLength: 300 })),
        }),
        response: { 200: Type.Object({ judgments: Type.Array(JudgmentSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const evaluator = await ownedEvaluator(projectId, request.params.evaluatorId)
      const query = request.query
      const page = await listJudgments(app.db, {
        projectId,
        evaluatorId: evaluator.id,
        status: query.status,
        runId: query.run_id,
        ...timeWindow(query),
        limit: query.limit,
        cursor: query.cursor === undefined || query.cursor === '' ? undefined : decodeCreatedAtCursor(query.cursor, judgmentIdPattern),
      })
      return { judgments: page.jobs.map(({ projectId: _p, ...job }) => job), nextCursor: page.next === null ? null : encodeCreatedAtCursor(page.next) }
    },
  )
}
