import type { ScoreDataType } from '../database.ts'
import type { Executor } from './executor.ts'

// A project's score configurations: a name, its type, and its range (numeric) or categories
// (categorical). Scores of a configured name are checked against it (scores.routes.ts) and the
// console offers one input per configuration.

export interface ScoreCategory {
  label: string
  value: number
}

export interface ScoreConfigDto {
  id: string
  projectId: string
  name: string
  dataType: ScoreDataType
  minValue: number | null
  maxValue: number | null
  categories: ScoreCategory[] | null
  description: string
  createdAt: string
}

export interface NewScoreConfig {
  projectId: string
  name: string
  dataType: ScoreDataType
  minValue?: number | null | undefined
  maxValue?: number | null | undefined
  categories?: ScoreCategory[] | null | undefined
  description?: string | undefined
}

/** Postgres's unique_violation for a second configuration of one name in a project. */
export const SCORE_CONFIG_EXISTS = 'score_configs_name_unique'

interface ScoreConfigRow {
  id: string
  project_id: string
  name: string
  data_type: ScoreDataType
  min_value: number | null
  max_value: number | null
  categories: ScoreCategory[] | null
  description: string
  created_at: Date
}

function toScoreConfigDto(row: ScoreConfigRow): ScoreConfigDto {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    dataType: row.data_type,
    minValue: row.min_value,
    maxValue: row.max_value,
    // jsonb arrives parsed from pg; PGlite too.
    categories: row.categories,
    description: row.description,
    createdAt: row.created_at.toISOString(),
  }
}

export async function createScoreConfig(db: Executor, config: NewScoreConfig): Promise<ScoreConfigDto> {
  const row = await db
    .insertInto('score_configs')
    .values({
      project_id: config.projectId,
      name: config.name,
      data_type: config.dataType,
      min_value: config.minValue ?? null,
      max_value: config.maxValue ?? null,
      categories: config.categories ? JSON.stringify(config.categories) : null,
      description: config.description ?? '',
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toScoreConfigDto(row as unknown as ScoreConfigRow)
}

/** A project's configurations, by name. */
export async function listScoreConfigs(db: Executor, projectId: string): Promise<ScoreConfigDto[]> {
  const rows = await db.selectFrom('score_configs').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
  return rows.map((row) => toScoreConfigDto(row as unknown as ScoreConfigRow))
}

export async function findScoreConfig(db: Executor, projectId: string, name: string): Promise<ScoreConfigDto | undefined> {
  const row = await db.selectFrom('score_configs').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst()
  return row === undefined ? undefined : toScoreConfigDto(row as unknown as ScoreConfigRow)
}

/** Whether it existed in that project; scores made with it keep their values (config_id becomes null). */
export async function deleteScoreConfig(db: Executor, projectId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('score_configs').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}
