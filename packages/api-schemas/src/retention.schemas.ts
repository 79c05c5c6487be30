import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of the retention routes (docs/api.md#retention-settings): a project's policy and how the cleanup runs.

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
