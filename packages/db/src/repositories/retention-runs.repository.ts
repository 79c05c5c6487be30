import { sql } from 'kysely'
import type { RetentionRunOutcome, RetentionRunTrigger } from '../database.ts'
import type { Executor } from './executor.ts'

export type { RetentionRunOutcome, RetentionRunTrigger }

/** A cleanup run, as the console's retention panel shows the last one. */
export interface CleanupRunDto {
  startedAt: string
  finishedAt: string
  trigger: RetentionRunTrigger
  outcome: RetentionRunOutcome
  deletedSpans: number
  droppedPartitions: number
}

/** How the process serving the cleanup is set up, as it said when it started (or after its last scheduled run). */
export interface CleanupStatusDto {
  /** The cleanup endpoint answers without a cron-api-key (CRON_API_KEY unset). */
  endpointOpen: boolean
  /** RETENTION_SCHEDULE of a process that runs the cleanup itself; null where an outside scheduler calls the endpoint. */
  schedule: string | null
  nextRunAt: string | null
  updatedAt: string
}

/** Runs kept: a CronJob every minute still keeps most of a day's, a daily schedule almost three years'. */
const keptRuns = 1_000

/** Records a run and forgets those before the latest `keptRuns`. */
export async function recordCleanupRun(db: Executor, run: { startedAt: Date; finishedAt: Date; trigger: RetentionRunTrigger; outcome: RetentionRunOutcome; deletedSpans: number; droppedPartitions: number }): Promise<void> {
  await db.insertInto('retention_runs').values({
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    trigger: run.trigger,
    outcome: run.outcome,
    deleted_spans: run.deletedSpans,
    dropped_partitions: run.droppedPartitions,
  }).execute()
  await sql`delete from retention_runs where id <= (select id from retention_runs order by id desc offset ${keptRuns} limit 1)`.execute(db)
}

export async function latestCleanupRun(db: Executor): Promise<CleanupRunDto | null> {
  const row = await db.selectFrom('retention_runs').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirst()
  if (!row) return null
  return {
    startedAt: row.started_at.toISOString(),
    finishedAt: row.finished_at.toISOString(),
    trigger: row.trigger,
    outcome: row.outcome,
    deletedSpans: Number(row.deleted_spans),
    droppedPartitions: row.dropped_partitions,
  }
}

export async function saveCleanupStatus(db: Executor, status: { endpointOpen: boolean; schedule: string | null; nextRunAt: Date | null }): Promise<void> {
  const values = { endpoint_open: status.endpointOpen, schedule: status.schedule, next_run_at: status.nextRunAt, updated_at: sql<Date>`now()` }
  await db.insertInto('retention_cleanup_status').values({ id: true, ...values }).onConflict((oc) => oc.column('id').doUpdateSet(values)).execute()
}

/** Null until a janitor (or `npm start`) has started on this database. */
export async function getCleanupStatus(db: Executor): Promise<CleanupStatusDto | null> {
  const row = await db.selectFrom('retention_cleanup_status').selectAll().executeTakeFirst()
  if (!row) return null
  return { endpointOpen: row.endpoint_open, schedule: row.schedule, nextRunAt: row.next_run_at?.toISOString() ?? null, updatedAt: row.updated_at.toISOString() }
}
