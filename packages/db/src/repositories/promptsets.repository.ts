import type { Promptset } from '../database.ts'
import type { Executor } from './executor.ts'

export interface PromptsetDto {
  id: string
  name: string
  description: string
  projectId: string
  createdAt: string
  updatedAt: string
}

function toPromptsetDto(row: Promptset): PromptsetDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    projectId: row.project_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export async function createPromptset(db: Executor, promptset: { projectId: string; name: string; description?: string }): Promise<PromptsetDto> {
  const row = await db
    .insertInto('promptsets')
    .values({ project_id: promptset.projectId, name: promptset.name, description: promptset.description ?? '' })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toPromptsetDto(row)
}

/** A promptset only if it belongs to the project: another project's promptset reads as missing. */
export async function findProjectPromptset(db: Executor, projectId: string, promptsetId: string): Promise<PromptsetDto | undefined> {
  const row = await db.selectFrom('promptsets').selectAll().where('id', '=', promptsetId).where('project_id', '=', projectId).executeTakeFirst()
  return row && toPromptsetDto(row)
}

export async function listProjectPromptsets(db: Executor, projectId: string): Promise<PromptsetDto[]> {
  const rows = await db.selectFrom('promptsets').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute()
  return rows.map(toPromptsetDto)
}
