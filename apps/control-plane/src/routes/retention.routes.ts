import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findTeamProject, getRetentionPolicy, upsertRetentionPolicy } from '@tracewell/db'
import { NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { callerTeamId, requireTeamKey } from '../auth.ts'
import { errorResponses, IsoDateSchema } from '../schemas.ts'
import { ProjectParamsSchema } from './projects.routes.ts'

export const RetentionPolicySchema = Type.Object({
  projectId: Type.String(),
  enabled: Type.Boolean(),
  retentionDays: Type.Integer(),
  lastRunAt: Type.Union([IsoDateSchema, Type.Null()]),
  lastDeletedSpans: Type.Union([Type.Integer(), Type.Null()]),
})
export type RetentionPolicy = Static<typeof RetentionPolicySchema>

export const RetentionPolicyBodySchema = Type.Object({
  enabled: Type.Boolean(),
  retentionDays: Type.Integer({ minimum: 1, maximum: 3650, description: 'days of traces to keep (1–3650)' }),
})
export type RetentionPolicyBody = Static<typeof RetentionPolicyBodySchema>

/** Per-project trace retention (team key); the janitor applies it. */
export const retentionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function ownedProjectId(request: FastifyRequest, projectId: string): Promise<string> {
    const project = await findTeamProject(app.db, callerTeamId(request), projectId)
    if (!project) throw new NotFoundError('Project not found')
    return project.id
  }

  app.get(
    '/api/projects/:projectId/retention',
    {
      onRequest: requireTeamKey,
      schema: {
        operationId: 'getRetentionPolicy',
        summary: 'Read a project’s retention policy',
        description: 'A project without a stored policy reads as {enabled: false, retentionDays: 30}.',
        tags: ['retention'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        response: { 200: RetentionPolicySchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => getRetentionPolicy(app.db, await ownedProjectId(request, request.params.projectId)),
  )

  app.put(
    '/api/projects/:projectId/retention',
    {
      onRequest: requireTeamKey,
      schema: {
        operationId: 'setRetentionPolicy',
        summary: 'Set a project’s retention policy',
        tags: ['retention'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        body: RetentionPolicyBodySchema,
        response: { 200: RetentionPolicySchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      return upsertRetentionPolicy(app.db, { projectId, enabled: request.body.enabled, retentionDays: request.body.retentionDays })
    },
  )
}
