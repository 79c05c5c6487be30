import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  addDatasetItems,
  countDatasetItems,
  createDataset,
  DATASET_EXISTS,
  deleteDataset,
  deleteDatasetItem,
  findDataset,
  findTraceSpans,
  listDatasetItems,
  listDatasets,
  type DatasetDto,
  type NewDatasetItem,
} from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { isUnstorableKeyword } from './storable-input.validator.ts'
import { AddedItemsSchema, CreateDatasetBodySchema, type DatasetItemBody, DatasetItemIdSchema, DatasetItemsBodySchema, DatasetSchema, DatasetWithItemsSchema, errorResponses, IdSchema, ProjectScopeQuerySchema } from '@tracewell/api-schemas'
import { itemFieldsOf } from '../datasets/item-from-span.ts'
import { itemsOfBody, parseJsonl } from '../datasets/item-bodies.ts'

// Datasets (docs/api.md#datasets): a project's items of {input, expectedOutput?, metadata?},
// versioned so that an experiment names the items it ran on. Items come one at a time, many at
// once, as a JSONL upload, or from a trace or span, whose LLM messages become the input and answer.

const jsonlTypes = ['application/x-ndjson', 'application/jsonl', 'application/json-lines']
const isJsonl = (request: FastifyRequest) => jsonlTypes.includes((request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '')

/** A JSONL upload of 10,000 items of a few kilobytes each. */
const itemsBodyLimit = 64 * 1024 * 1024

const DatasetParamsSchema = Type.Object({ datasetId: IdSchema })
const ItemParamsSchema = Type.Object({ datasetId: IdSchema, itemId: DatasetItemIdSchema })

/** Datasets and their items (project key, or team key with project_id). */
export const datasetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['datasets']
  const security = [{ apiKey: [] }]

  // Items come as JSON or JSONL only: a text/plain body is a 415, not an item that is a string.
  app.removeContentTypeParser('text/plain')
  // JSONL uploads: parsed here, one JSON value per line, each then checked as an item.
  app.addContentTypeParser(jsonlTypes, { parseAs: 'string', bodyLimit: itemsBodyLimit }, (_request, body, done) => {
    try {
      done(null, parseJsonl(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  async function ownedDataset(request: FastifyRequest, datasetId: string): Promise<DatasetDto> {
    const dataset = await findDataset(app.db, callerProjectId(request), datasetId)
    if (dataset === undefined) throw new NotFoundError('Dataset not found')
    return dataset
  }

  /** An item body as stored: its input and expected output taken from its source when not given. */
  async function itemOf(projectId: string, body: DatasetItemBody, where: string, spansCache: Map<string, Awaited<ReturnType<typeof findTraceSpans>>>): Promise<NewDatasetItem> {
    const traceId = body.sourceTraceId?.toLowerCase() ?? null
    const spanId = body.sourceSpanId?.toLowerCase() ?? null
    let input = body.input
    let expectedOutput = body.expectedOutput
    if (traceId !== null) {
      let spans = spansCache.get(traceId)
      if (spans === undefined) spansCache.set(traceId, (spans = await findTraceSpans(app.db, projectId, traceId)))
      if (spans.length === 0) throw new BadRequestError(`${where}/sourceTraceId: no trace ${traceId} in this project`)
      if (spanId !== null && !spans.some((span) => span.spanId === spanId)) throw new BadRequestError(`${where}/sourceSpanId: no span ${spanId} in trace ${traceId}`)
      if (input === undefined || (expectedOutput === undefined && !('expectedOutput' in body))) {
        const fields = itemFieldsOf(spans, spanId)
        if (fields === undefined && input === undefined) {
          throw new BadRequestError(`${where}: the ${spanId === null ? 'trace' : 'span'} records no LLM messages nor input to take; give an input`)
        }
        input ??= fields?.input
        if (!('expectedOutput' in body)) expectedOutput = fields?.expectedOutput ?? null
      }
    }
    return {
      id: body.id ?? randomUUID(),
      input,
      expectedOutput: expectedOutput ?? null,
      metadata: body.metadata ?? null,
      sourceTraceId: traceId,
      sourceSpanId: spanId,
    }
  }

  app.post(
    '/api/datasets',
    {
      onRequest: authorize,
      config: { permission: 'datasets:write' },
      schema: {
        operationId: 'createDataset',
        summary: 'Create a dataset (empty, version 0)',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        body: CreateDatasetBodySchema,
        response: { 201: DatasetSchema, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { name, description, metadata } = request.body
      try {
        const dataset = await createDataset(app.db, { projectId: callerProjectId(request), name, description: description ?? '', metadata: metadata ?? {} })
        return reply.code(201).send(dataset)
      } catch (error) {
        if ((error as { constraint?: unknown }).constraint === DATASET_EXISTS) throw new ConflictError(`A dataset named ${JSON.stringify(name)} exists already`)
        throw error
      }
    },
  )

  app.get(
    '/api/datasets',
    {
      onRequest: authorize,
      config: { permission: 'datasets:read' },
      schema: {
        operationId: 'listDatasets',
        summary: 'The project’s datasets, newest first, with their current versions and item counts',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ datasets: Type.Array(DatasetSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ({ datasets: await listDatasets(app.db, callerProjectId(request)) }),
  )

  app.get(
    '/api/datasets/:datasetId',
    {
      onRequest: authorize,
      config: { permission: 'datasets:read' },
      schema: {
        operationId: 'getDataset',
        summary: 'A dataset with its items: of the current version, or of ?version=, a page at a time',
        tags,
        security,
        params: DatasetParamsSchema,
        querystring: Type.Object({
          project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
          version: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'an earlier version (default: the current one)' })),
          limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 10_000, description: 'items at most (1–10,000)' }),
          offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0, description: 'items skipped, in the dataset’s order' }),
        }),
        response: { 200: DatasetWithItemsSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const dataset = await ownedDataset(request, request.params.datasetId)
      const version = request.query.version ?? dataset.version
      if (version > dataset.version) throw new NotFoundError(`Dataset version ${version} not found: the current version is ${dataset.version}`)
      const { limit, offset } = request.query
      const [items, itemsTotal] = await Promise.all([listDatasetItems(app.db, dataset.id, version, { limit, offset }), countDatasetItems(app.db, dataset.id, version)])
      return { ...dataset, itemsVersion: version, itemsTotal, items }
    },
  )

  app.delete(
    '/api/datasets/:datasetId',
    {
      onRequest: authorize,
      config: { permission: 'datasets:write' },
      schema: {
        operationId: 'deleteDataset',
        summary: 'Delete a dataset with its items and experiments (the traces and scores stay)',
        tags,
        security,
        params: DatasetParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteDataset(app.db, callerProjectId(request), request.params.datasetId))) throw new NotFoundError('Dataset not found')
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/datasets/:datasetId/items.jsonl',
    {
      onRequest: authorize,
      config: { permission: 'datasets:read' },
      schema: {
        operationId: 'downloadDatasetItems',
        summary: 'The items as JSONL, one {id, input, expectedOutput, metadata, sourceTraceId, sourceSpanId} per line: what an upload takes back',
        tags,
        security,
        params: DatasetParamsSchema,
        querystring: Type.Object({
          project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
          version: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
        }),
        produces: ['application/x-ndjson'],
        response: { 200: Type.String({ description: 'application/x-ndjson' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const dataset = await ownedDataset(request, request.params.datasetId)
      const version = request.query.version ?? dataset.version
      if (version > dataset.version) throw new NotFoundError(`Dataset version ${version} not found: the current version is ${dataset.version}`)
      const items = await listDatasetItems(app.db, dataset.id, version)
      const lines = items.map((item) =>
        JSON.stringify({
          id: item.id,
          input: item.input,
          ...(item.expectedOutput === null ? {} : { expectedOutput: item.expectedOutput }),
          ...(item.metadata === null ? {} : { metadata: item.metadata }),
          ...(item.sourceTraceId === null ? {} : { sourceTraceId: item.sourceTraceId }),
          ...(item.sourceSpanId === null ? {} : { sourceSpanId: item.sourceSpanId }),
        }),
      )
      const filename = `${dataset.name.replace(/[^A-Za-z0-9_.-]+/g, '-')}-v${version}.jsonl`
      return reply
        .header('content-type', 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .send(lines.length === 0 ? '' : `${lines.join('\n')}\n`)
    },
  )

  app.post(
    '/api/datasets/:datasetId/items',
    {
      onRequest: authorize,
      config: { permission: 'datasets:write' },
      bodyLimit: itemsBodyLimit,
      // The union below is checked item by item in the handler, so a 400 names the item and field.
      attachValidation: true,
      schema: {
        operationId: 'addDatasetItems',
        summary: 'Add items (one, {items: [...]}, or JSONL): a new version of the dataset',
        description:
          'An item with sourceTraceId (and sourceSpanId) keeps that link; its input and expectedOutput, when not given, are the LLM call’s ' +
          'input messages and answer. An item whose id is in the dataset replaces it. All items of a request make one new version.',
        tags,
        security,
        params: DatasetParamsSchema,
        querystring: ProjectScopeQuerySchema,
        consumes: ['application/json', ...jsonlTypes],
        body: DatasetItemsBodySchema,
        response: { 201: AddedItemsSchema, ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const failure = request.validationError?.validation?.[0]
      if (isUnstorableKeyword(failure?.keyword)) throw new BadRequestError(`body${failure.instancePath}: ${failure.message}`)
      const dataset = await ownedDataset(request, request.params.datasetId)
      const bodies = itemsOfBody(request.body, isJsonl(request))
      const seen = new Map<string, string>()
      for (const { body, where } of bodies) {
        if (body.id === undefined) continue
        const first = seen.get(body.id)
        if (first !== undefined) throw new BadRequestError(`${where}/id: ${JSON.stringify(body.id)} is given already at ${first}`)
        seen.set(body.id, where)
      }
      const spans = new Map<string, Awaited<ReturnType<typeof findTraceSpans>>>()
      const items: NewDatasetItem[] = []
      for (const { body, where } of bodies) items.push(await itemOf(dataset.projectId, body, where, spans))
      return reply.code(201).send(await addDatasetItems(app.db, dataset.id, items))
    },
  )

  app.delete(
    '/api/datasets/:datasetId/items/:itemId',
    {
      onRequest: authorize,
      config: { permission: 'datasets:write' },
      schema: {
        operationId: 'deleteDatasetItem',
        summary: 'Delete an item: a new version without it (earlier versions keep it)',
        tags,
        security,
        params: ItemParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ version: Type.Integer({ description: 'the dataset’s new version' }) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const dataset = await ownedDataset(request, request.params.datasetId)
      const version = await deleteDatasetItem(app.db, dataset.id, request.params.itemId)
      if (version === undefined) throw new NotFoundError('Dataset item not found')
      return { version }
    },
  )
}
