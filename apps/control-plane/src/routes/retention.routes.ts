import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { getCleanupStatus, getRetentionPolicy, latestCleanupRun, upsertRetentionPolicy, type Executor, type RetentionPolicyDto } from '@tracewell/db'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, ProjectParamsSchema, type RetentionPolicy, RetentionPolicyBodySchema, RetentionPolicySchema } from '@tracewell/api-schemas'

/**
 * The policy with how the cleanup runs, as the process serving the cleanup recorded it
 * (retention_cleanup_status, retention_runs): so a control plane of its own, on another machine
 * than the janitor, says what the janitor does and not what its own settings would.
 */
async function withCleanup(db: Executor, policy: RetentionPolicyDto): Promise<RetentionPolicy> {
  const [status, lastRun] = await Promise.all([getCleanupStatus(db), latestCleanupRun(db)])
  const endpoint = status === null ? null : status.endpointOpen ? 'open' : 'cron-api-key'
  return { ...policy, cleanup: { endpoint, schedule: status?.schedule ?? null, nextRunAt: status?.nextRunAt ?? null, lastRun } }
}

/** Per-project trace retention (settings:read, settings:write); the janitor applies it. */
export const retentionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/projects/:projectId/retention',
    {
      onRequest: authorize,
      config: { permission: 'settings:read' },
      schema: {
        operationId: 'getRetentionPolicy',
        summary: 'Read a project’s retention policy',
        description: 'A project without a stored policy reads as {enabled: false, retentionDays: 30}.',
        tags: ['retention'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        response: { 200: RetentionPolicySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => withCleanup(app.db, await getRetentionPolicy(app.db, callerProjectId(request))),
  )

  app.put(
    '/api/projects/:projectId/retention',
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'setRetentionPolicy',
        summary: 'Set a project’s retention policy',
        tags: ['retention'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        body: RetentionPolicyBodySchema,
        response: { 200: RetentionPolicySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      return withCleanup(app.db, await upsertRetentionPolicy(app.db, { projectId, enabled: request.body.enabled, retentionDays: request.body.retentionDays }))
    },
  )
}
