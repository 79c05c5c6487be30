import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createErasure, findErasure, findTeamProject, listErasures, type ErasureSubject } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { callerLabel, callerTeamId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { type Erasure, ErasureAcceptedSchema, type ErasureBody, ErasureBodySchema, ErasureListSchema, ErasureParamsSchema, ErasureSchema, errorResponses, ProjectParamsSchema } from '@tracewell/api-schemas'

// Erasure requests (GDPR art. 17): everything stored about a user, a session or some traces,
// deleted in the background by the writers (@tracewell/write-path's erasure-runner.ts).

/** The one subject a body names, or a 400 saying what is wrong. */
function subjectOf(body: ErasureBody): ErasureSubject {
  const given = (['userId', 'sessionId', 'traceIds'] as const).filter((field) => body[field] !== undefined)
  if (given.length !== 1) {
    throw new BadRequestError(`body: exactly one of userId, sessionId, traceIds is required, got ${given.length === 0 ? 'none' : given.join(', ')}`)
  }
  if (body.userId !== undefined) return { userId: body.userId }
  if (body.sessionId !== undefined) return { sessionId: body.sessionId }
  // Stored lower-case, as the write path stores trace ids.
  return { traceIds: body.traceIds!.map((id) => id.toLowerCase()) }
}

const toErasure = (erasure: NonNullable<Awaited<ReturnType<typeof findErasure>>>): Erasure => {
  const { projectId: _project, ...rest } = erasure
  return rest
}

/** Erasure requests of a project (team key or console session). */
export const erasureRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function ownedProjectId(request: FastifyRequest, projectId: string): Promise<string> {
    const project = await findTeamProject(app.db, callerTeamId(request), projectId)
    if (!project) throw new NotFoundError('Project not found')
    return project.id
  }

  app.post(
    '/api/projects/:projectId/erasures',
    {
      onRequest: authorize,
      config: { permission: 'erasures:manage' },
      schema: {
        operationId: 'createErasure',
        summary: 'Erase everything stored about a user, a session or some traces',
        description:
          'Answers 202 at once; the writers delete the spans, trace and session summaries, scores and annotations, judgments and dataset items ' +
          'taken from the traces in the background, lower the usage rollups by exactly what went, and look once more after the queue has drained.',
        tags: ['erasures'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        body: ErasureBodySchema,
        response: { 202: ErasureAcceptedSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      const erasure = await createErasure(app.db, projectId, subjectOf(request.body), callerLabel(request))
      return reply.code(202).send({ id: erasure.id, status: erasure.status })
    },
  )

  app.get(
    '/api/projects/:projectId/erasures',
    {
      onRequest: authorize,
      config: { permission: 'erasures:manage' },
      schema: {
        operationId: 'listErasures',
        summary: 'List a project’s erasure requests, newest first (the last 100)',
        tags: ['erasures'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        response: { 200: ErasureListSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      return { erasures: (await listErasures(app.db, projectId, 100)).map(toErasure) }
    },
  )

  app.get(
    '/api/projects/:projectId/erasures/:erasureId',
    {
      onRequest: authorize,
      config: { permission: 'erasures:manage' },
      schema: {
        operationId: 'getErasure',
        summary: 'Read an erasure request: its status and what it deleted so far',
        tags: ['erasures'],
        security: [{ apiKey: [] }],
        params: ErasureParamsSchema,
        response: { 200: ErasureSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      const erasure = await findErasure(app.db, projectId, request.params.erasureId)
      if (!erasure) throw new NotFoundError('Erasure not found')
      return toErasure(erasure)
    },
  )
}
