import type { JanitorConfig } from '@tracewell/config'
import type { App } from '@tracewell/http'
import { defineService, type ServiceDeps } from '@tracewell/service'
import { cleanupDetails } from './cleanup/cleanup-status.ts'
import { cleanupRoutes } from './routes/cleanup.routes.ts'

/** The janitor: the cleanup endpoint a scheduler calls, plus /healthz, /readyz and /metrics. */
export const janitorService = defineService<JanitorConfig>({
  name: 'janitor',
  openApi: {
    title: 'Tracewell janitor',
    description: 'Deletes spans older than each project retention policy; called by a cron job.',
    securitySchemes: ['cronKey'],
  },
  migrations: 'check',
  async register(app, config) {
    await app.register(cleanupRoutes, { cronApiKey: config.CRON_API_KEY, batchSize: config.CLEANUP_BATCH_SIZE, timeBudgetMs: config.CLEANUP_TIME_BUDGET_MS, lockTimeoutMs: config.CLEANUP_LOCK_TIMEOUT_MS, cutoffs: config.CLEANUP_CUTOFF, auditLogRetentionDays: config.AUDIT_LOG_RETENTION_DAYS })
    // No schedule of its own: a CronJob calls it.
    return { details: { cleanup: async () => cleanupDetails(config.CRON_API_KEY, undefined) } }
  },
})

export type JanitorDeps = ServiceDeps

export const buildApp = (config: JanitorConfig, deps?: JanitorDeps): Promise<App> => janitorService.build(config, deps)
