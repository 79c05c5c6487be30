export { buildApp, type JanitorDeps } from './app.ts'
export {
  cleanupRoutes,
  CleanupFailedResponseSchema,
  CleanupResponseSchema,
  ProjectCleanupSchema,
  type CleanupFailedResponse,
  type CleanupResponse,
  type CleanupRoutesOptions,
  type ProjectCleanup,
} from './routes/cleanup.routes.ts'
export {
  CLEANUP_LOCK_KEY,
  cutoffFor,
  type CutoffGranularity,
  runRetentionCleanup,
  type ProjectCleanupReport,
  type RetentionRunOptions,
  type RetentionRunOutcome,
  type RetentionRunReport,
} from './cleanup/retention-run.ts'
export { cleanupMetrics, countRun, RunOutcomes, type CleanupMetrics } from './cleanup/cleanup.metrics.ts'
export { cleanupDetails, OPEN_ENDPOINT_WARNING, type CleanupDetails } from './cleanup/cleanup-status.ts'
export { nextScheduledRun, NO_SCHEDULE, startRetentionSchedule, type RetentionSchedule, type RetentionScheduleOptions } from './cleanup/retention-schedule.ts'
