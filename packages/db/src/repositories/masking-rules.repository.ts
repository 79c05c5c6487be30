import { sql } from 'kysely'
import type { Executor } from './executor.ts'

/**
 * A project's own masking rules, as the API validated them (@tracewell/masking's MaskingRule);
 * stored as given, so a later version reads what an earlier one wrote.
 */
export interface ProjectMaskingRulesDto {
  projectId: string
  rules: unknown[]
  updatedAt: string
}

const columns = ['project_id', 'rules', 'updated_at'] as const

function toDto(row: { project_id: string; rules: unknown[]; updated_at: Date }): ProjectMaskingRulesDto {
  return { projectId: row.project_id, rules: row.rules, updatedAt: row.updated_at.toISOString() }
}

/** The project's own rules; undefined when it has none (the default applies). */
export async function getProjectMaskingRules(db: Executor, projectId: string): Promise<ProjectMaskingRulesDto | undefined> {
  const row = await db.selectFrom('project_masking_rules').select(columns).where('project_id', '=', projectId).executeTakeFirst()
  return row && toDto(row)
}

export async function upsertProjectMaskingRules(db: Executor, projectId: string, rules: readonly unknown[]): Promise<ProjectMaskingRulesDto> {
  const json = JSON.stringify(rules)
  const row = await db
    .insertInto('project_masking_rules')
    .values({ project_id: projectId, rules: json })
    .onConflict((oc) => oc.column('project_id').doUpdateSet({ rules: json, updated_at: sql`now()` }))
    .returning(columns)
    .executeTakeFirstOrThrow()
  return toDto(row)
}

/** Removes the project's own rules; whether it had some. */
export async function deleteProjectMaskingRules(db: Executor, projectId: string): Promise<boolean> {
  const result = await db.deleteFrom('project_masking_rules').where('project_id', '=', projectId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Every project's own rules, as ingest loads them all every few seconds. */
export async function listProjectMaskingRules(db: Executor): Promise<ProjectMaskingRulesDto[]> {
  const rows = await db.selectFrom('project_masking_rules').select(columns).execute()
  return rows.map(toDto)
}
