import type { Db } from '../create-db.ts'
import type { Team } from '../database.ts'
import type { Executor } from './executor.ts'

export interface TeamDto {
  id: string
  name: string
  createdAt: string
}

function toTeamDto(row: Team): TeamDto {
  return { id: row.id, name: row.name, createdAt: row.created_at.toISOString() }
}

export async function createTeam(db: Executor, team: { name: string; id?: string }): Promise<TeamDto> {
  const row = await db.insertInto('teams').values(team).returningAll().executeTakeFirstOrThrow()
  return toTeamDto(row)
}

export async function findTeamByName(db: Executor, name: string): Promise<TeamDto | undefined> {
  const row = await db.selectFrom('teams').selectAll().where('name', '=', name).orderBy('created_at').executeTakeFirst()
  return row && toTeamDto(row)
}

export async function countTeams(db: Db): Promise<number> {
  const { count } = await db.selectFrom('teams').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow()
  return Number(count)
}

export async function findTeamById(db: Executor, teamId: string): Promise<TeamDto | undefined> {
  const row = await db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirst()
  return row && toTeamDto(row)
}

/** The default team: the first one made (INIT_TEAM_NAME's, or the first start's). */
export async function findOldestTeam(db: Executor): Promise<TeamDto | undefined> {
  const row = await db.selectFrom('teams').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst()
  return row && toTeamDto(row)
}
