import { sql } from 'kysely'
import type { RetentionPolicy } from '../database.ts'
import type { Executor } from './executor.ts'

export interface RetentionPolicyDto {
  projectId: string
  enabled: boolean
  retentionDays: number
  lastRunAt: string | null
  lastDeletedSpans: number | null
}

/** A project without a stored policy reads as disabled with 30 days (docs/api.md#retention-settings). */
const defaultRetentionPolicy = { enabled: false, retentionDays: 30 } as const

function toRetentionPolicyDto(row: RetentionPolicy): RetentionPolicyDto {
  return {
    projectId: row.project_id,
    enabled: row.enabled,
    retentionDays: row.retention_days,
    lastRunAt: row.last_run_at?.toISOString() ?? null,
    lastDeletedSpans: row.last_deleted_spans === null ? null : Number(row.last_deleted_spans),
  }
}

export async function getRetentionPolicy(db: Executor, projectId: string): Promise<RetentionPolicyDto> {
  const row = await db.selectFrom('project_retention_policies').selectAll().where('project_id', '=', projectId).executeTakeFirst()
  return row ? toRetentionPolicyDto(row) : { projectId, ...defaultRetentionPolicy, lastRunAt: null, lastDeletedSpans: null }
}

export async function upsertRetentionPolicy(
  db: Executor,
  policy: { projectId: string; enabled: boolean; retentionDays: number },
): Promise<RetentionPolicyDto> {
  const row = await db
    .insertInto('project_retention_policies')
    .values({ project_id: policy.projectId, enabled: policy.enabled, retention_days: policy.retentionDays })
    .onConflict((oc) =>
      oc.column('project_id').doUpdateSet({ enabled: policy.enabled, retention_days: policy.retentionDays, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
  return toRetentionPolicyDto(row)
}

export async function listEnabledRetentionPolicies(db: Executor): Promise<RetentionPolicyDto[]> {
  const rows = await db.selectFrom('project_retention_policies').selectAll().where('enabled', '=', true).orderBy('project_id').execute()
  return rows.map(toRetentionPolicyDto)
}

export async function recordRetentionRun(db: Executor, projectId: string, run: { at: Date; deletedSpans: number }): Promise<void> {
  await db
    .updateTable('project_retention_policies')
    .set({ last_run_at: run.at, last_deleted_spans: run.deletedSpans })
    .where('project_id', '=', projectId)
    .execute()
}
