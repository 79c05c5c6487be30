import type { Project } from '../database.ts'
import type { Executor } from './executor.ts'

export interface ProjectDto {
  id: string
  name: string
  description: string
  teamId: string
  createdAt: string
  updatedAt: string
}

export function toProjectDto(row: Project): ProjectDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    teamId: row.team_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export async function createProject(
  db: Executor,
  project: { teamId: string; name: string; description?: string; id?: string },
): Promise<ProjectDto> {
  const row = await db
    .insertInto('projects')
    .values({ team_id: project.teamId, name: project.name, description: project.description ?? '', ...(project.id ? { id: project.id } : {}) })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toProjectDto(row)
}

export async function findProjectById(db: Executor, id: string): Promise<ProjectDto | undefined> {
  const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toProjectDto(row)
}

/** A project only if it belongs to the team: another team's project reads as missing (docs/api.md#credentials). */
export async function findTeamProject(db: Executor, teamId: string, projectId: string): Promise<ProjectDto | undefined> {
  const row = await db.selectFrom('projects').selectAll().where('id', '=', projectId).where('team_id', '=', teamId).executeTakeFirst()
  return row && toProjectDto(row)
}

export async function listTeamProjects(db: Executor, teamId: string): Promise<ProjectDto[]> {
  const rows = await db.selectFrom('projects').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute()
  return rows.map(toProjectDto)
}
