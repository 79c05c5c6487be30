import { sql } from 'kysely'
import type { Executor } from './executor.ts'

/** A project's own ingest rate limit: spans per second and burst, or both null for no limit at all. */
export interface ProjectIngestLimitDto {
  projectId: string
  spansPerSecond: number | null
  burst: number | null
  updatedAt: string
}

const columns = ['project_id', 'spans_per_second', 'burst', 'updated_at'] as const

function toDto(row: { project_id: string; spans_per_second: number | null; burst: number | null; updated_at: Date }): ProjectIngestLimitDto {
  return { projectId: row.project_id, spansPerSecond: row.spans_per_second, burst: row.burst, updatedAt: row.updated_at.toISOString() }
}

/** The project's own limit; undefined when it has none (the default applies). */
export async function getProjectIngestLimit(db: Executor, projectId: string): Promise<ProjectIngestLimitDto | undefined> {
  const row = await db.selectFrom('project_ingest_limits').select(columns).where('project_id', '=', projectId).executeTakeFirst()
  return row && toDto(row)
}

export async function upsertProjectIngestLimit(db: Executor, limit: { projectId: string; spansPerSecond: number | null; burst: number | null }): Promise<ProjectIngestLimitDto> {
  const values = { spans_per_second: limit.spansPerSecond, burst: limit.burst }
  const row = await db
    .insertInto('project_ingest_limits')
    .values({ project_id: limit.projectId, ...values })
    .onConflict((oc) => oc.column('project_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returning(columns)
    .executeTakeFirstOrThrow()
  return toDto(row)
}

/** Removes the project's own limit; whether it had one. */
export async function deleteProjectIngestLimit(db: Executor, projectId: string): Promise<boolean> {
  const result = await db.deleteFrom('project_ingest_limits').where('project_id', '=', projectId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Every project's own limit, as ingest loads them all every few seconds. */
export async function listProjectIngestLimits(db: Executor): Promise<ProjectIngestLimitDto[]> {
  const rows = await db.selectFrom('project_ingest_limits').select(columns).execute()
  return rows.map(toDto)
}
