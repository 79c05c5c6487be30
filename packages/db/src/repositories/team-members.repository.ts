import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Who belongs to which team with which role, and per-project overrides (docs/accounts.md). The
// rules about who may grant what live in @tracewell/policy; these functions only store.

export type TeamRoleName = 'owner' | 'admin' | 'member' | 'viewer'
export type ProjectRoleName = TeamRoleName | 'none'

export interface TeamMemberDto {
  userId: string
  email: string
  name: string
  role: TeamRoleName
  projectRoles: { projectId: string; role: ProjectRoleName }[]
  joinedAt: string
}

export interface MembershipDto {
  teamId: string
  teamName: string
  role: TeamRoleName
  /** Overrides of the team role on single projects. */
  projectRoles: Record<string, ProjectRoleName>
}

/** Adds a person to a team, or changes their role if they are in it. */
export async function putTeamMember(db: Executor, teamId: string, userId: string, role: TeamRoleName): Promise<void> {
  await db
    .insertInto('team_members')
    .values({ team_id: teamId, user_id: userId, role })
    .onConflict((oc) => oc.columns(['team_id', 'user_id']).doUpdateSet({ role }))
    .execute()
}

/** Removes a person from a team with their project roles there; whether they were in it. */
export async function removeTeamMember(db: Executor, teamId: string, userId: string): Promise<boolean> {
  await db
    .deleteFrom('project_members')
    .where('user_id', '=', userId)
    .where('project_id', 'in', db.selectFrom('projects').select('id').where('team_id', '=', teamId))
    .execute()
  const result = await db.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Sets (or with null, removes) a person's own role on one project. */
export async function setProjectRole(db: Executor, projectId: string, userId: string, role: ProjectRoleName | null): Promise<void> {
  if (role === null) {
    await db.deleteFrom('project_members').where('project_id', '=', projectId).where('user_id', '=', userId).execute()
    return
  }
  await db
    .insertInto('project_members')
    .values({ project_id: projectId, user_id: userId, role })
    .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet({ role }))
    .execute()
}

export async function teamRoleOf(db: Executor, teamId: string, userId: string): Promise<TeamRoleName | undefined> {
  const row = await db.selectFrom('team_members').select('role').where('team_id', '=', teamId).where('user_id', '=', userId).executeTakeFirst()
  return row?.role
}

/** The person's team role and own project role for one project; undefined when not in its team. */
export async function rolesOnProject(db: Executor, projectId: string, userId: string): Promise<{ teamId: string; teamRole: TeamRoleName; projectRole: ProjectRoleName | null } | undefined> {
  const row = await db
    .selectFrom('projects')
    .innerJoin('team_members', (join) => join.onRef('team_members.team_id', '=', 'projects.team_id').on('team_members.user_id', '=', userId))
    .leftJoin('project_members', (join) => join.onRef('project_members.project_id', '=', 'projects.id').on('project_members.user_id', '=', userId))
    .select(['projects.team_id as teamId', 'team_members.role as teamRole', 'project_members.role as projectRole'])
    .where('projects.id', '=', projectId)
    .executeTakeFirst()
  return row && { teamId: row.teamId, teamRole: row.teamRole, projectRole: row.projectRole ?? null }
}

/** Every team the person belongs to, oldest membership first, with their project overrides. */
export async function membershipsOf(db: Executor, userId: string): Promise<MembershipDto[]> {
  const rows = await db
    .selectFrom('team_members')
    .innerJoin('teams', 'teams.id', 'team_members.team_id')
    .select(['teams.id as teamId', 'teams.name as teamName', 'team_members.role as role'])
    .where('team_members.user_id', '=', userId)
    .orderBy('team_members.created_at')
    .orderBy('teams.id')
    .execute()
  const overrides = await db
    .selectFrom('project_members')
    .innerJoin('projects', 'projects.id', 'project_members.project_id')
    .select(['projects.team_id as teamId', 'project_members.project_id as projectId', 'project_members.role as role'])
    .where('project_members.user_id', '=', userId)
    .execute()
  return rows.map((row) => ({
    ...row,
    projectRoles: Object.fromEntries(overrides.filter((override) => override.teamId === row.teamId).map((override) => [override.projectId, override.role])),
  }))
}

/** A team's members by name, with their project overrides. */
export async function listTeamMembers(db: Executor, teamId: string): Promise<TeamMemberDto[]> {
  const rows = await db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(['users.id as userId', 'users.email', 'users.name', 'team_members.role', 'team_members.created_at'])
    .where('team_members.team_id', '=', teamId)
    .orderBy(sql`lower(users.name)`)
    .orderBy('users.id')
    .execute()
  const overrides = await db
    .selectFrom('project_members')
    .innerJoin('projects', 'projects.id', 'project_members.project_id')
    .select(['project_members.user_id as userId', 'project_members.project_id as projectId', 'project_members.role as role'])
    .where('projects.team_id', '=', teamId)
    .execute()
  return rows.map((row) => ({
    userId: row.userId,
    email: row.email,
    name: row.name,
    role: row.role,
    projectRoles: overrides.filter((override) => override.userId === row.userId).map(({ projectId, role }) => ({ projectId, role })),
    joinedAt: row.created_at.toISOString(),
  }))
}

/**
 * How many owners the team has, counted under a lock on their rows, so that two admins demoting
 * the last two owners at once cannot both succeed (call inside the transaction that changes one).
 */
export async function countTeamOwnersForUpdate(db: Executor, teamId: string): Promise<number> {
  const rows = await db.selectFrom('team_members').select('user_id').where('team_id', '=', teamId).where('role', '=', 'owner').forUpdate().execute()
  return rows.length
}

/** Whether any team has an owner account yet: until one does, the install offers its setup link and the console still signs in with team keys. */
export async function anyTeamOwnerExists(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('team_members').select('user_id').where('role', '=', 'owner').limit(1).executeTakeFirst()
  return row !== undefined
}
