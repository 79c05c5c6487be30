import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import { toProjectDto, type ProjectDto } from './projects.repository.ts'

// Queries of the headless bootstrap (INIT_* settings, idempotent at every start; docs/api.md#bootstrap).

// Any constant will do; it only has to differ from the other advisory locks of the schema.
const bootstrapLockKey = 7_412_305_001n

/**
 * Serialises workspace bootstraps for the rest of the transaction: replicas starting together
 * must not each create the same team (team names are not unique in the schema).
 */
export async function lockWorkspaceBootstrap(trx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(${bootstrapLockKey})`.execute(trx)
}

/** The oldest project of that name in the team, if any. */
export async function findTeamProjectByName(db: Executor, teamId: string, name: string): Promise<ProjectDto | undefined> {
  const row = await db
    .selectFrom('projects')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('name', '=', name)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst()
  return row && toProjectDto(row)
}

/** Whether the installation has no team yet (first start of the all-in-one process). */
export async function hasNoTeams(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('teams').select('id').limit(1).executeTakeFirst()
  return row === undefined
}

