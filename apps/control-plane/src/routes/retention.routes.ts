import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { getCleanupStatus, getRetentionPolicy, latestCleanupRun, upsertRetentionPolicy, type Executor, type RetentionPolicyDto } from '@tracewell/db'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, IsoDateSchema } from '@tracewell/api-schemas'
import { ProjectParamsSchema } from './projects.routes.ts'

export const CleanupRunSchema = Type.Object({
  startedAt: IsoDateSchema,
  finishedAt: IsoDateSchema,
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('request')], { description: 'schedule: npm start’s RETENTION_SCHEDULE; request: a call of /api/cron/cleanup-traces (a CronJob)' }),
  outcome: Type.Union([Type.Literal('complete'), Type.Literal('incomplete'), Type.Literal('failed')], { description: 'incomplete: the time budget ran out (the next run continues); failed: a project failed' }),
  deletedSpans: Type.Integer({ description: 'spans deleted row by row, every project' }),
  droppedPartitions: Type.Integer({ description: 'expired day partitions dropped whole' }),
})
export type CleanupRun = Static<typeof CleanupRunSchema>

/** How the cleanup that applies every policy runs (issue 46 §4, issue 48 §8), the same for every project of the database. */
export const RetentionCleanupSchema = Type.Object({
  endpoint: Type.Union([Type.Literal('open'), Type.Literal('cron-api-key'), Type.Null()], {
    description: 'open: the janitor (or npm start) has no CRON_API_KEY, so anyone who can reach it may run the cleanup; null: none has started on this database yet',
  }),
  schedule: Type.Union([Type.String(), Type.Null()], { description: 'RETENTION_SCHEDULE (cron, UTC) where npm start runs the cleanup itself; null where an outside scheduler (a CronJob) calls the janitor' }),
  nextRunAt: Type.Union([IsoDateSchema, Type.Null()], { description: 'the next scheduled run; null without a schedule of Tracewell’s own' }),
  lastRun: Type.Union([CleanupRunSchema, Type.Null()], { description: 'the latest run of the cleanup, whoever started it' }),
})
export type RetentionCleanup = Static<typeof RetentionCleanupSchema>

export const RetentionPolicySchema = Type.Object({
  projectId: Type.String(),
  enabled: Type.Boolean(),
  retentionDays: Type.Integer(),
  lastRunAt: Type.Union([IsoDateSchema, Type.Null()]),
  lastDeletedSpans: Type.Union([Type.Integer(), Type.Null()]),
  cleanup: RetentionCleanupSchema,
})
export type RetentionPolicy = Static<typeof RetentionPolicySchema>

export const RetentionPolicyBodySchema = Type.Object({
  enabled: Type.Boolean(),
  retentionDays: Type.Integer({ minimum: 1, maximum: 3650, description: 'days of traces to keep (1–3650)' }),
})
export type RetentionPolicyBody = Static<typeof RetentionPolicyBodySchema>

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
