import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { IngestRateLimitValues } from '@tracewell/config'
import { deleteProjectIngestLimit, findTeamProject, getProjectIngestLimit, upsertProjectIngestLimit } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { authorize } from '../accounts/authorize.ts'
import { callerTeamId } from '../auth.ts'
import { errorResponses, type IngestLimit, IngestLimitBodySchema, IngestLimitSchema, ProjectParamsSchema } from '@tracewell/api-schemas'

export interface IngestLimitRoutesOptions {
  /** The settings' default limit (defaultIngestRateLimit), null when there is none. */
  defaultLimit: IngestRateLimitValues | null
}

/**
 * A project's ingest rate limit (team key): GET what applies, PUT its own, DELETE it to go back
 * to the default. Ingest reloads the limits every INGEST_RATE_LIMIT_REFRESH_MS.
 */
export const ingestLimitRoutes: FastifyPluginAsyncTypebox<IngestLimitRoutesOptions> = async (app, options) => {
  const defaults = { spansPerSecond: options.defaultLimit?.spansPerSecond ?? null, burst: options.defaultLimit?.burst ?? null }
  async function ownedProjectId(request: FastifyRequest, projectId: string): Promise<string> {
    const project = await findTeamProject(app.db, callerTeamId(request), projectId)
    if (!project) throw new NotFoundError('Project not found')
    return project.id
  }
  const answer = (projectId: string, own: { spansPerSecond: number | null; burst: number | null } | undefined): IngestLimit =>
    own ? { projectId, source: 'project', spansPerSecond: own.spansPerSecond, burst: own.burst, default: defaults } : { projectId, source: 'default', ...defaults, default: defaults }

  const path = '/api/projects/:projectId/ingest-limit'
  const common = { tags: ['ingest limits'], security: [{ apiKey: [] }], params: ProjectParamsSchema }

  app.get(
    path,
    {
      onRequest: authorize,
      config: { permission: 'settings:read' },
      schema: {
        operationId: 'getIngestLimit',
        summary: 'Read a project’s ingest rate limit',
        description: 'The limit that applies to the project: its own (source "project"), or the default of the settings (source "default"); null values mean no limit.',
        tags: common.tags,
        security: common.security,
        params: common.params,
        response: { 200: IngestLimitSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      return answer(projectId, await getProjectIngestLimit(app.db, projectId))
    },
  )

  app.put(
    path,
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'setIngestLimit',
        summary: 'Set a project’s own ingest rate limit',
        description: 'Replaces the default for this project. `{"spansPerSecond": null}` exempts it from any limit. Ingest applies the change within INGEST_RATE_LIMIT_REFRESH_MS.',
        tags: common.tags,
        security: common.security,
        params: common.params,
        body: IngestLimitBodySchema,
        response: { 200: IngestLimitSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      const { spansPerSecond, burst } = request.body
      if (spansPerSecond === null && burst !== undefined) throw new BadRequestError('body/burst: must be absent when spansPerSecond is null (no limit)')
      const own = await upsertProjectIngestLimit(app.db, { projectId, spansPerSecond, burst: spansPerSecond === null ? null : (burst ?? 2 * spansPerSecond) })
      return answer(projectId, own)
    },
  )

  app.delete(
    path,
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'deleteIngestLimit',
        summary: 'Remove a project’s own ingest rate limit',
        description: 'The default of the settings applies again. 204 whether or not the project had a limit of its own.',
        tags: common.tags,
        security: common.security,
        params: common.params,
        response: { 204: Type.Null({ description: 'the default applies' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await deleteProjectIngestLimit(app.db, await ownedProjectId(request, request.params.projectId))
      return reply.code(204).send(null)
    },
  )
}
