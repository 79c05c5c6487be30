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
export { cleanupMetrics, RunOutcomes, type CleanupMetrics } from './cleanup/cleanup.metrics.ts'
