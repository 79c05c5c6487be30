// Roles, lowest first. A team role is one of the four; a project may override it for one person,
// higher or lower, down to `none` (the project is hidden from them).

export const teamRoles = ['viewer', 'member', 'admin', 'owner'] as const
export type TeamRole = (typeof teamRoles)[number]

export const projectRoles = ['none', ...teamRoles] as const
export type ProjectRole = (typeof projectRoles)[number]

const rank: Record<ProjectRole, number> = { none: 0, viewer: 1, member: 2, admin: 3, owner: 4 }

/** Whether `role` is `lowest` or above it. */
export function atLeast(role: ProjectRole, lowest: ProjectRole): boolean {
  return rank[role] >= rank[lowest]
}

export function isTeamRole(value: unknown): value is TeamRole {
  return typeof value === 'string' && (teamRoles as readonly string[]).includes(value)
}

export function isProjectRole(value: unknown): value is ProjectRole {
  return typeof value === 'string' && (projectRoles as readonly string[]).includes(value)
}

/** A person's role on a project: the project's own role for them when set, else their team role. */
export function effectiveProjectRole(teamRole: TeamRole, projectRole: ProjectRole | null | undefined): ProjectRole {
  return projectRole ?? teamRole
}

/**
 * Nobody grants a role above their own: an admin invites and re-roles up to admin, only an owner
 * makes owners. `none` (a project hidden from someone) is within everyone's reach who may grant.
 */
export function mayGrant(granter: ProjectRole, role: ProjectRole): boolean {
  return atLeast(granter, role)
}
