import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  createExperiment,
  deleteExperiment,
  experimentAggregates,
  findDataset,
  findEvaluator,
  findExperiment,
  findLabelledPrompt,
  findLlmConnection,
  findProjectPromptset,
  findPromptVersion,
  listDatasetItems,
  listExperimentResults,
  listExperiments,
  listExperimentScores,
  upsertExternalResult,
  type ExperimentAggregates,
  type ExperimentDto,
  type PromptDto,
} from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { callerProjectId } from '../auth.ts'
import { authorize, requirePermission } from '../accounts/authorize.ts'
import { CreateExperimentBodySchema, errorResponses, ExperimentResultSchema, ExperimentSchema, ExperimentWithResultsSchema, ExternalResultsBodySchema, IdSchema, ProjectScopeQuerySchema } from '@tracewell/api-schemas'

// Experiments (docs/api.md#experiments): a prompt version run over every item of one version of a
// dataset by the evaluator worker (its experiment-items queue, EXPERIMENT_CONCURRENCY at a time),
// each output judged by the experiment's evaluators; or, without a prompt, an SDK experiment whose
// caller runs its own code and links each trace to an item. Answered at once; the worker starts a
// queued experiment within EVALUATOR_POLL_INTERVAL_MS.

/** The attribute every trace of an experiment carries (the worker writes it). */
const experimentIdKey = 'tracewell.experiment.id'

const emptyAggregates: ExperimentAggregates = {
  results: { total: 0, pending: 0, completed: 0, failed: 0 },
  latencyMs: { avg: null, p50: null, p95: null },
  inputTokens: 0,
  outputTokens: 0,
  costUsd: null,
  scores: [],
}

const withAggregates = (experiment: ExperimentDto, aggregates: ExperimentAggregates | undefined) => ({
  ...experiment,
  // Its traces are Tracewell's own (service tracewell), which the list shows only when asked.
  traceFilter: `attr=${experimentIdKey}=${experiment.id}&include_tracewell_calls=true`,
  aggregates: aggregates ?? emptyAggregates,
})

const ExperimentParamsSchema = Type.Object({ experimentId: IdSchema })

export const experimentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['experiments']
  const security = [{ apiKey: [] }]

  async function ownedExperiment(request: FastifyRequest, experimentId: string): Promise<ExperimentDto> {
    const experiment = await findExperiment(app.db, callerProjectId(request), experimentId)
    if (experiment === undefined) throw new NotFoundError('Experiment not found')
    return experiment
  }

  async function promptOf(request: FastifyRequest, promptsetId: string, version: number | undefined, label: string | undefined): Promise<{ prompt: PromptDto; promptsetName: string }> {
    if (version !== undefined && label !== undefined) throw new BadRequestError('body: pass either version or label, not both')
    const promptset = await findProjectPromptset(app.db, callerProjectId(request), promptsetId)
    if (promptset === undefined) throw new BadRequestError(`body/promptsetId: no prompt registry ${JSON.stringify(promptsetId)} in this project`)
    const prompt = version !== undefined ? await findPromptVersion(app.db, promptset.id, version) : await findLabelledPrompt(app.db, promptset.id, label ?? 'production')
    if (prompt === undefined) {
      throw new BadRequestError(version !== undefined ? `body/version: the registry has no version ${version}` : `body/label: no version of the registry is labelled ${JSON.stringify(label ?? 'production')}`)
    }
    return { prompt, promptsetName: promptset.name }
  }

  app.post(
    '/api/experiments',
    {
      onRequest: authorize,
      config: { permission: 'experiments:write' },
      schema: {
        operationId: 'createExperiment',
        summary: 'Run a prompt version over a dataset version (202), or open an SDK experiment for your own code’s results (201)',
        description:
          'With promptsetId: each item’s input fills the prompt’s variables (its keys by name; `input` is the whole input), the messages go to the model through ' +
          'the connection, and each call is a trace of the project tagged tracewell.experiment.id. Without: an SDK experiment; POST /api/experiments/{id}/results.',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        body: CreateExperimentBodySchema,
        response: { 201: ExperimentSchema, 202: ExperimentSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const projectId = callerProjectId(request)
      const body = request.body
      const dataset = await findDataset(app.db, projectId, body.datasetId)
      if (dataset === undefined) throw new BadRequestError(`body/datasetId: no dataset ${JSON.stringify(body.datasetId)} in this project`)
      const datasetVersion = body.datasetVersion ?? dataset.version
      if (datasetVersion > dataset.version) throw new BadRequestError(`body/datasetVersion: the dataset is at version ${dataset.version}`)
      const items = await listDatasetItems(app.db, dataset.id, datasetVersion)
      if (items.length === 0) throw new BadRequestError(`body/datasetId: the dataset has no items in version ${datasetVersion}`)
      const common = { projectId, datasetId: dataset.id, datasetVersion, description: body.description ?? '', metadata: body.metadata ?? {} }

      if (body.promptsetId === undefined) {
        for (const field of ['version', 'label', 'connectionId', 'model', 'modelSettings', 'evaluatorIds'] as const) {
          if (body[field] !== undefined) throw new BadRequestError(`body/${field}: only with promptsetId (an SDK experiment runs your own code)`)
        }
        const experiment = await createExperiment(
          app.db,
          { ...common, name: body.name ?? `SDK run ${new Date().toISOString()}`, kind: 'sdk', promptsetId: null, promptVersion: null, connectionId: null, model: null, modelSettings: {}, evaluatorIds: [] },
          items.map((item) => item.id),
        )
        return reply.code(201).send(withAggregates(experiment, undefined))
      }

      // A prompt experiment calls the model on the project's connection; an SDK one spends nothing of ours.
      await requirePermission(request, 'experiments:run')
      const { prompt, promptsetName } = await promptOf(request, body.promptsetId, body.version, body.label)
      if (body.connectionId === undefined) throw new BadRequestError('body/connectionId: required with promptsetId')
      if ((await findLlmConnection(app.db, projectId, body.connectionId)) === undefined) throw new BadRequestError(`body/connectionId: no LLM connection ${JSON.stringify(body.connectionId)} in this project`)
      for (const [index, evaluatorId] of (body.evaluatorIds ?? []).entries()) {
        if ((await findEvaluator(app.db, projectId, evaluatorId)) === undefined) throw new BadRequestError(`body/evaluatorIds/${index}: no evaluator ${JSON.stringify(evaluatorId)} in this project`)
      }
      const model = body.model ?? prompt.model
      const experiment = await createExperiment(
        app.db,
        {
          ...common,
          name: body.name ?? `${promptsetName} v${prompt.version} · ${model}`,
          kind: 'prompt',
          promptsetId: prompt.promptsetId,
          promptVersion: prompt.version,
          connectionId: body.connectionId,
          model,
          modelSettings: body.modelSettings ?? {},
          evaluatorIds: body.evaluatorIds ?? [],
        },
        items.map((item) => item.id),
      )
      const aggregates = await experimentAggregates(app.db, [experiment.id])
      return reply.code(202).send(withAggregates(experiment, aggregates.get(experiment.id)))
    },
  )

  app.get(
    '/api/experiments',
    {
      onRequest: authorize,
      config: { permission: 'experiments:read' },
      schema: {
        operationId: 'listExperiments',
        summary: 'The project’s experiments (of one dataset with dataset_id), newest first, with their figures',
        tags,
        security,
        querystring: Type.Object({
          project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
          dataset_id: Type.Optional(IdSchema),
        }),
        response: { 200: Type.Object({ experiments: Type.Array(ExperimentSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const experiments = await listExperiments(app.db, callerProjectId(request), request.query.dataset_id)
      const aggregates = await experimentAggregates(app.db, experiments.map((experiment) => experiment.id))
      return { experiments: experiments.map((experiment) => withAggregates(experiment, aggregates.get(experiment.id))) }
    },
  )

  app.get(
    '/api/experiments/:experimentId',
    {
      onRequest: authorize,
      config: { permission: 'experiments:read' },
      schema: {
        operationId: 'getExperiment',
        summary: 'An experiment with its results item by item (output, latency, tokens, cost, scores) and its figures',
        tags,
        security,
        params: ExperimentParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: ExperimentWithResultsSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const experiment = await ownedExperiment(request, request.params.experimentId)
      const [results, scores, items, aggregates] = await Promise.all([
        listExperimentResults(app.db, experiment.id),
        listExperimentScores(app.db, experiment.id),
        listDatasetItems(app.db, experiment.datasetId, experiment.datasetVersion),
        experimentAggregates(app.db, [experiment.id]),
      ])
      const itemById = new Map(items.map((item) => [item.id, item]))
      const order = new Map(items.map((item, index) => [item.id, index]))
      const scoresByResult = Map.groupBy(scores, (score) => score.resultId)
      return {
        ...withAggregates(experiment, aggregates.get(experiment.id)),
        results: results
          .toSorted((a, b) => (order.get(a.datasetItemId) ?? Infinity) - (order.get(b.datasetItemId) ?? Infinity))
          .map(({ experimentId: _experiment, ...result }) => ({
            ...result,
            input: itemById.get(result.datasetItemId)?.input ?? null,
            expectedOutput: itemById.get(result.datasetItemId)?.expectedOutput ?? null,
            scores: (scoresByResult.get(result.id) ?? []).map(({ resultId: _result, ...score }) => score),
          })),
      }
    },
  )

  app.delete(
    '/api/experiments/:experimentId',
    {
      onRequest: authorize,
      config: { permission: 'experiments:write' },
      schema: {
        operationId: 'deleteExperiment',
        summary: 'Delete an experiment and its results (their traces and scores stay); items not yet run are not run',
        tags,
        security,
        params: ExperimentParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const experiment = await ownedExperiment(request, request.params.experimentId)
      if (experiment.kind === 'prompt') await requirePermission(request, 'experiments:run')
      if (!(await deleteExperiment(app.db, experiment.projectId, experiment.id))) throw new NotFoundError('Experiment not found')
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/experiments/:experimentId/results',
    {
      onRequest: authorize,
      config: { permission: 'experiments:write' },
      schema: {
        operationId: 'addExperimentResults',
        summary: 'Link your traces to dataset items as an SDK experiment’s results (an item’s earlier result is replaced)',
        description: 'Latency, tokens and cost not given are the trace’s, once it has arrived. Score the traces with POST /api/scores as for any trace.',
        tags,
        security,
        params: ExperimentParamsSchema,
        querystring: ProjectScopeQuerySchema,
        body: ExternalResultsBodySchema,
        response: { 201: Type.Object({ results: Type.Array(Type.Omit(ExperimentResultSchema, ['input', 'expectedOutput', 'scores'])) }), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const experiment = await ownedExperiment(request, request.params.experimentId)
      if (experiment.kind !== 'sdk') throw new ConflictError('The worker runs a prompt experiment’s items: results are posted to SDK experiments only')
      const items = new Set((await listDatasetItems(app.db, experiment.datasetId, experiment.datasetVersion)).map((item) => item.id))
      const bodies = request.body.results
      bodies.forEach((result, index) => {
        if (!items.has(result.datasetItemId)) throw new BadRequestError(`body/results/${index}/datasetItemId: no item ${JSON.stringify(result.datasetItemId)} in version ${experiment.datasetVersion} of the dataset`)
      })
      const stored = []
      for (const result of bodies) {
        const { experimentId: _experiment, ...row } = await upsertExternalResult(app.db, experiment.projectId, experiment.id, result.datasetItemId, {
          output: result.output ?? null,
          traceId: result.traceId.toLowerCase(),
          spanId: result.spanId?.toLowerCase() ?? null,
          model: result.model ?? null,
          inputTokens: result.inputTokens ?? null,
          outputTokens: result.outputTokens ?? null,
          costUsd: result.costUsd ?? null,
          latencyMs: result.latencyMs ?? null,
        })
        stored.push(row)
      }
      return reply.code(201).send({ results: stored })
    },
  )
}
