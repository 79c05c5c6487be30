import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  addAnnotationQueueItems,
  completeQueueItem,
  createAnnotationQueue,
  deleteAnnotationQueue,
  findAnnotationQueue,
  findQueueItem,
  listAnnotationQueues,
  listScoreConfigs,
  listTeamMembers,
  queueProgressByPerson,
  skipQueueItem,
  takeNextQueueItem,
  updateAnnotationQueue,
  type Db,
  type TraceFilterParams,
} from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import { authorize } from '../accounts/authorize.ts'
import { signedInPerson } from '../collaboration/signed-in-person.ts'
import { maxTracesFromFilter, traceIdsMatching } from '../collaboration/traces-matching.ts'
import { errorResponses, IsoDateSchema, QueueItemParamsSchema, type QueueBody, QueueBodySchema, QueueItemSchema, QueueObjectTypeSchema, QueueParamsSchema, QueueSchema, QueueWithPeopleSchema, TraceFilterBodySchema } from '@tracewell/api-schemas'
import { checkTraceFilter } from './trace-filter-body.ts'

// Annotation queues (docs/collaboration.md#annotation-queues): traces, spans or sessions handed
// to people to score. `next` holds an item for its taker for ten minutes, so two people never
// get the same one; skip gives it back (to the end of the queue), complete marks it done.

export const queueHoldMs = 10 * 60 * 1000

const ProjectQuerySchema = Type.Object({ project_id: Type.Optional(Type.String()) })

const AddItemsBodySchema = Type.Union([
  Type.Object(
    { objectType: QueueObjectTypeSchema, objectIds: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 1_000 }) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      filter: TraceFilterBodySchema,
      from: Type.Optional(IsoDateSchema),
      to: Type.Optional(IsoDateSchema),
    },
    { additionalProperties: false, description: `the traces the trace list shows for this filter (newest first, at most ${maxTracesFromFilter})` },
  ),
])

/** A queue's settings, checked against the project: its score configurations and its team's members. */
async function checkQueueBody(db: Db, projectId: string, teamId: string, body: QueueBody): Promise<void> {
  const configs = new Set((await listScoreConfigs(db, projectId)).map((config) => config.id))
  for (const [index, id] of body.scoreConfigIds.entries()) {
    if (!configs.has(id)) throw new BadRequestError(`body/scoreConfigIds/${index}: the project has no score configuration ${id}`)
  }
  if ((body.assigneeIds ?? []).length === 0) return
  const members = new Set((await listTeamMembers(db, teamId)).map((member) => member.userId))
  for (const [index, id] of (body.assigneeIds ?? []).entries()) {
    if (!members.has(id)) throw new BadRequestError(`body/assigneeIds/${index}: ${id} is not a member of this project's team`)
  }
}

function parsedDate(value: string | undefined, at: string): Date | undefined {
  if (value === undefined) return undefined
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new BadRequestError(`${at}: expected an ISO 8601 date-time`)
  return date
}

export const annotationQueueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const security = [{ apiKey: [] }]
  const tags = ['collaboration']

  async function queueOf(projectId: string, queueId: string) {
    const queue = await findAnnotationQueue(app.db, projectId, queueId)
    if (queue === undefined) throw new NotFoundError('Annotation queue not found')
    return queue
  }

  app.get(
    '/api/annotation-queues',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:read' },
      schema: { operationId: 'listAnnotationQueues', summary: 'The project’s annotation queues with their progress', tags, security, querystring: ProjectQuerySchema, response: { 200: Type.Object({ queues: Type.Array(QueueSchema) }), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => ({ queues: await listAnnotationQueues(app.db, request.controlPlaneProjectId as string) }),
  )

  app.post(
    '/api/annotation-queues',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: { operationId: 'createAnnotationQueue', summary: 'Make an annotation queue', tags, security, querystring: ProjectQuerySchema, body: QueueBodySchema, response: { 201: QueueSchema, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const person = signedInPerson(request, 'Making annotation queues')
      const projectId = request.controlPlaneProjectId as string
      await checkQueueBody(app.db, projectId, request.teamId as string, request.body)
      const queue = await createAnnotationQueue(app.db, projectId, { name: request.body.name, description: request.body.description ?? '', scoreConfigIds: request.body.scoreConfigIds, assigneeIds: request.body.assigneeIds ?? [] }, person.id)
      return reply.code(201).send(queue)
    },
  )

  app.get(
    '/api/annotation-queues/:queueId',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:read' },
      schema: { operationId: 'getAnnotationQueue', summary: 'One annotation queue with its progress, per person too', tags, security, params: QueueParamsSchema, querystring: ProjectQuerySchema, response: { 200: QueueWithPeopleSchema, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => {
      const queue = await queueOf(request.controlPlaneProjectId as string, request.params.queueId)
      return { ...queue, progressByPerson: await queueProgressByPerson(app.db, queue.id) }
    },
  )

  app.put(
    '/api/annotation-queues/:queueId',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: { operationId: 'updateAnnotationQueue', summary: 'Change a queue’s name, description, scores and assignees', tags, security, params: QueueParamsSchema, querystring: ProjectQuerySchema, body: QueueBodySchema, response: { 200: QueueSchema, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => {
      const projectId = request.controlPlaneProjectId as string
      await queueOf(projectId, request.params.queueId)
      await checkQueueBody(app.db, projectId, request.teamId as string, request.body)
      const queue = await updateAnnotationQueue(app.db, projectId, request.params.queueId, { name: request.body.name, description: request.body.description ?? '', scoreConfigIds: request.body.scoreConfigIds, assigneeIds: request.body.assigneeIds ?? [] })
      return queue ?? (await queueOf(projectId, request.params.queueId))
    },
  )

  app.delete(
    '/api/annotation-queues/:queueId',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: { operationId: 'deleteAnnotationQueue', summary: 'Delete a queue and its items (the scores given stay)', tags, security, params: QueueParamsSchema, querystring: ProjectQuerySchema, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      if (!(await deleteAnnotationQueue(app.db, request.controlPlaneProjectId as string, request.params.queueId))) throw new NotFoundError('Annotation queue not found')
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/annotation-queues/:queueId/items',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: {
        operationId: 'addAnnotationQueueItems',
        summary: 'Add traces, spans or sessions to a queue, by id or by the trace list’s filter',
        description: 'Items already in the queue stay where they are.',
        tags,
        security,
        params: QueueParamsSchema,
        querystring: ProjectQuerySchema,
        body: AddItemsBodySchema,
        response: { 201: Type.Object({ added: Type.Integer(), matched: Type.Integer() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const projectId = request.controlPlaneProjectId as string
      const queue = await queueOf(projectId, request.params.queueId)
      const body = request.body
      if ('filter' in body) {
        checkTraceFilter(body.filter as TraceFilterParams)
        const window = { from: parsedDate(body.from, 'body/from'), to: parsedDate(body.to, 'body/to') }
        const traceIds = await traceIdsMatching(app.db, projectId, body.filter as TraceFilterParams, Object.fromEntries(Object.entries(window).filter(([, value]) => value !== undefined)))
        return reply.code(201).send({ added: await addAnnotationQueueItems(app.db, queue.id, 'trace', traceIds), matched: traceIds.length })
      }
      return reply.code(201).send({ added: await addAnnotationQueueItems(app.db, queue.id, body.objectType, [...new Set(body.objectIds)]), matched: body.objectIds.length })
    },
  )

  app.post(
    '/api/annotation-queues/:queueId/next',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: {
        operationId: 'takeNextAnnotationQueueItem',
        summary: 'The caller’s next item: the one they hold, else the first nobody holds (held for 10 minutes)',
        tags,
        security,
        params: QueueParamsSchema,
        querystring: ProjectQuerySchema,
        response: { 200: Type.Object({ item: Type.Union([QueueItemSchema, Type.Null()], { description: 'null when nothing is left to take' }) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const person = signedInPerson(request, 'Taking queue items')
      const queue = await queueOf(request.controlPlaneProjectId as string, request.params.queueId)
      return { item: (await takeNextQueueItem(app.db, queue.id, person.id, queueHoldMs)) ?? null }
    },
  )

  app.post(
    '/api/annotation-queues/:queueId/items/:itemId/skip',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: { operationId: 'skipAnnotationQueueItem', summary: 'Give a held item back: it goes to the end of the queue', tags, security, params: QueueItemParamsSchema, querystring: ProjectQuerySchema, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (request, reply) => {
      const person = signedInPerson(request, 'Skipping queue items')
      const queue = await queueOf(request.controlPlaneProjectId as string, request.params.queueId)
      if (await skipQueueItem(app.db, queue.id, request.params.itemId, person.id)) return reply.code(204).send(null)
      if ((await findQueueItem(app.db, queue.id, request.params.itemId)) === undefined) throw new NotFoundError('Queue item not found')
      throw new ConflictError('You do not hold this item (take it with next first)')
    },
  )

  app.post(
    '/api/annotation-queues/:queueId/items/:itemId/complete',
    {
      onRequest: authorize,
      config: { permission: 'annotation-queues:write' },
      schema: { operationId: 'completeAnnotationQueueItem', summary: 'Mark an item done, after its scores are given', tags, security, params: QueueItemParamsSchema, querystring: ProjectQuerySchema, response: { 200: QueueItemSchema, ...errorResponses(400, 401, 403, 404, 409) } },
    },
    async (request) => {
      const person = signedInPerson(request, 'Completing queue items')
      const queue = await queueOf(request.controlPlaneProjectId as string, request.params.queueId)
      const item = await completeQueueItem(app.db, queue.id, request.params.itemId, person.id)
      if (item !== undefined) return item
      const found = await findQueueItem(app.db, queue.id, request.params.itemId)
      if (found === undefined) throw new NotFoundError('Queue item not found')
      throw new ConflictError(found.status === 'completed' ? 'This item is completed already' : 'Someone else holds this item')
    },
  )
}
