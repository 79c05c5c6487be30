import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import { secretsMatch } from '@tracewell/auth'
import { ConflictError, installErrorHandler, messageBody, UnauthorizedError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { saveCleanupStatus } from '@tracewell/db'
import { cleanupMetrics, countRun } from '../cleanup/cleanup.metrics.ts'
import { OPEN_ENDPOINT_WARNING } from '../cleanup/cleanup-status.ts'
import { runRetentionCleanup, type CutoffGranularity, type RetentionRunReport } from '../cleanup/retention-run.ts'
import { NO_SCHEDULE, startRetentionSchedule, type RetentionSchedule } from '../cleanup/retention-schedule.ts'

export interface CleanupRoutesOptions {
  /** CRON_API_KEY. Unset or empty leaves the endpoint open, with a warning at start-up. */
  cronApiKey?: string | undefined
  batchSize: number
  timeBudgetMs: number
  /** CLEANUP_LOCK_TIMEOUT_MS: how long dropping a partition waits for its lock. */
  lockTimeoutMs: number
  /** CLEANUP_CUTOFF: whole UTC days, or exactly now − retention. */
  cutoffs: CutoffGranularity
  /** AUDIT_LOG_RETENTION_DAYS: each run also removes audit log entries older than this. */
  auditLogRetentionDays: number
  /**
   * RETENTION_SCHEDULE: `npm start` runs the cleanup itself on this cron schedule; absent (the
   * janitor service, which a CronJob calls) or `off`, only calls of the endpoint run it.
   */
  schedule?: string | undefined
}

export const CronKeyHeadersSchema = Type.Object({ 'cron-api-key': Type.Optional(Type.String()) })

export const ProjectCleanupSchema = Type.Object({
  projectId: Type.String(),
  retentionDays: Type.Integer(),
  cutoff: Type.String({ format: 'date-time', description: 'spans that started strictly before this instant were deleted (the start of a UTC day with CLEANUP_CUTOFF=day)' }),
  deletedSpans: Type.Integer(),
  remaining: Type.Optional(Type.Literal(true, { description: 'the time budget ran out before this project was done' })),
  error: Type.Optional(Type.String({ description: 'this project failed; its spans were not (all) deleted' })),
})
export type ProjectCleanup = Static<typeof ProjectCleanupSchema>

const DroppedPartitionsSchema = Type.Integer({
  minimum: 1,
  description: 'present when the run dropped day partitions of spans whole (every span of them past every project\'s retention); their spans are not counted in deletedSpans',
})

const PrunedAuditEntriesSchema = Type.Integer({ minimum: 1, description: 'present when the run removed audit log entries older than AUDIT_LOG_RETENTION_DAYS' })

export const CleanupResponseSchema = Type.Object({
  success: Type.Literal(true),
  message: Type.String(),
  deletedSpans: Type.Integer({ description: 'spans deleted row by row' }),
  droppedPartitions: Type.Optional(DroppedPartitionsSchema),
  prunedAuditEntries: Type.Optional(PrunedAuditEntriesSchema),
  complete: Type.Optional(Type.Literal(false, { description: 'present when the time budget ran out: call again to continue' })),
  projects: Type.Array(ProjectCleanupSchema),
})
export type CleanupResponse = Static<typeof CleanupResponseSchema>

export const CleanupFailedResponseSchema = Type.Object({
  success: Type.Literal(false),
  message: Type.String(),
  droppedPartitions: Type.Optional(DroppedPartitionsSchema),
  prunedAuditEntries: Type.Optional(PrunedAuditEntriesSchema),
  complete: Type.Optional(Type.Literal(false)),
  projects: Type.Array(ProjectCleanupSchema),
})
export type CleanupFailedResponse = Static<typeof CleanupFailedResponseSchema>

export const ErrorMessageSchema = Type.Object({ message: Type.String() })
export type ErrorMessage = Static<typeof ErrorMessageSchema>

const missingKeyMessage = 'Unauthorized. Missing API key'
const invalidKeyMessage = 'Unauthorized. Invalid API key'
const alreadyRunningMessage = 'Cleanup already running'

// The documented wording, verbatim even for one span: clients may match on it.
const spans = (count: number) => `${count} spans`

/** `droppedPartitions` only when the run dropped some, as `complete` only when it is false: the body of an ordinary run is unchanged. */
const dropped = (report: RetentionRunReport) => ({
  ...(report.droppedPartitions.length > 0 ? { droppedPartitions: report.droppedPartitions.length } : {}),
  ...(report.prunedAuditEntries > 0 ? { prunedAuditEntries: report.prunedAuditEntries } : {}),
})

/** The projects as docs/api.md shows them: `remaining`/`error` only where they apply. */
function toProjects(report: RetentionRunReport): ProjectCleanup[] {
  return report.projects.map((project) => ({ ...project }))
}

/**
 * GET (and POST) /api/cron/cleanup-traces (docs/api.md#cleanup): called by a Kubernetes CronJob with the
 * `cron-api-key` header. Encapsulated: it needs `app.db` and `app.metrics` from the root app, so
 * the all-in-one process registers it unchanged.
 *
 * Beyond the plain run: when the time budget runs out the answer is still 200
 * (`success: true`: what was deleted is deleted) with `"complete": false`, `"remaining": true` on
 * each unfinished project and a message asking to call again; the next call continues from where
 * this one stopped, since a cutoff only ever moves forward.
 *
 * With `schedule` (npm start) the same runs also start by themselves (retention-schedule.ts).
 */
export const cleanupRoutes: FastifyPluginAsyncTypebox<CleanupRoutesOptions> = async (app, options) => {
  installErrorHandler(app, messageBody)
  const cronApiKey = options.cronApiKey ? options.cronApiKey : undefined
  // Open as the Langtrace API documents it, but said where an operator looks: here, in /readyz
  // (cleanup-status.ts) and in the console's retention panel (retention_cleanup_status).
  if (cronApiKey === undefined) app.log.warn(OPEN_ENDPOINT_WARNING)
  const metrics = cleanupMetrics(app.metrics)
  const schedule = options.schedule === undefined || options.schedule === NO_SCHEDULE ? null : options.schedule

  // Shutting down stops a long run between two batches instead of holding the process open.
  const shutdown = new AbortController()
  app.addHook('preClose', async () => shutdown.abort())
  const runSettings = { batchSize: options.batchSize, timeBudgetMs: options.timeBudgetMs, lockTimeoutMs: options.lockTimeoutMs, cutoffs: options.cutoffs, auditLogRetentionDays: options.auditLogRetentionDays, signal: shutdown.signal }

  // Once the app is ready: the status the console reads, and the schedule. Neither is awaited, so
  // a database slow to answer does not hold the start; both are waited for on close.
  let scheduled: RetentionSchedule | null = null
  let statusSaved: Promise<void> = Promise.resolve()
  const saveStatus = (nextRunAt: Date | null) =>
    (statusSaved = saveCleanupStatus(app.db, { endpointOpen: cronApiKey === undefined, schedule, nextRunAt })
      .catch((error: unknown) => app.log.error({ err: error }, 'could not record how the retention cleanup is set up')))
  app.addHook('onReady', async () => {
    if (schedule === null) return void saveStatus(null)
    scheduled = startRetentionSchedule(app.db, {
      schedule,
      run: { ...runSettings, onDeleted: (_projectId, deleted) => metrics.deletedSpans.inc(deleted) },
      log: app.log,
      onRun: (outcome) => countRun(metrics, outcome),
      onScheduled: saveStatus,
    })
  })
  app.addHook('onClose', async () => {
    await scheduled?.stop()
    await statusSaved
  })

  const checkCronKey = async (request: FastifyRequest) => {
    if (cronApiKey === undefined) return
    const presented = request.headers['cron-api-key']
    if (presented === undefined || presented === '') throw new UnauthorizedError(missingKeyMessage)
    // A repeated header arrives as an array (or joined); either way it is not the key.
    if (typeof presented !== 'string' || !secretsMatch(presented, cronApiKey)) throw new UnauthorizedError(invalidKeyMessage)
  }

  // GET is what a Kubernetes CronJob's curl sends; POST for schedulers that change state only with
  // it. One handler; an operationId each, as OpenAPI wants them unique.
  for (const [method, operationId] of [['GET', 'cleanupTraces'], ['POST', 'cleanupTracesPost']] as const) app.route({
    method,
    url: '/api/cron/cleanup-traces',
    // Checked before the body is read, so an unauthenticated caller costs nothing.
    onRequest: checkCronKey,
    schema: {
      operationId,
      summary: 'Delete spans older than each enabled project retention policy',
      tags: ['cleanup'],
      security: [{ cronKey: [] }],
      headers: CronKeyHeadersSchema,
      response: {
        200: CleanupResponseSchema,
        401: ErrorMessageSchema,
        409: ErrorMessageSchema,
        500: Type.Union([CleanupFailedResponseSchema, ErrorMessageSchema]),
      },
    },
    handler: async (request, reply) => {
      let outcome
      try {
        outcome = await runRetentionCleanup(app.db, { ...runSettings, log: request.log, onDeleted: (_projectId, deleted) => metrics.deletedSpans.inc(deleted) })
      } catch (error) {
        // The run could not start or list the policies (e.g. the database is down).
        request.log.error({ err: error }, 'retention cleanup run failed')
        countRun(metrics, 'error')
        return reply.code(500).send({ success: false, message: `Cleanup failed (request ${request.id})`, projects: [] })
      }
      countRun(metrics, outcome)
      if (!outcome.ran) throw new ConflictError(alreadyRunningMessage)

      const { report } = outcome
      const incomplete = report.complete ? {} : { complete: false as const }
      if (report.failedProjects > 0) {
        const failed = report.failedProjects === 1 ? '1 project' : `${report.failedProjects} projects`
        return reply.code(500).send({
          success: false,
          message: `Deleted ${spans(report.deletedSpans)}; cleanup failed for ${failed} (request ${request.id})`,
          ...dropped(report),
          ...incomplete,
          projects: toProjects(report),
        })
      }
      const message = report.complete
        ? `Deleted ${spans(report.deletedSpans)}`
        : `Deleted ${spans(report.deletedSpans)}; time budget reached, call again to continue`
      return reply.code(200).send({
        success: true, message, deletedSpans: report.deletedSpans, ...dropped(report), ...incomplete, projects: toProjects(report),
      })
    },
  })
}
