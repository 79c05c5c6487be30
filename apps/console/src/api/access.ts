import { permissions, roleAllows, teamKeyAllows, type Permission } from '@tracewell/policy'
import type { Session } from './types.ts'
import { useSession } from './session.api.ts'

// What the console shows is decided by the same policy module the server judges by: a control the
// signed-in person may not use is not shown (the server refuses it anyway, docs/permissions.md).

/** Whether the session may `permission` (on `projectId` for project permissions: the person's role there). */
export function sessionAllows(session: Session | null | undefined, permission: Permission, projectId?: string): boolean {
  if (!session) return false
  if (session.kind === 'team-key') return teamKeyAllows(permission)
  if (permissions[permission].on === 'project' && projectId !== undefined) {
    const team = session.teams.find((candidate) => candidate.id === session.teamId)
    const project = team?.projects.find((candidate) => candidate.id === projectId)
    return project !== undefined && roleAllows(project.role, permission)
  }
  return roleAllows(session.role, permission)
}

/** The hook form of sessionAllows, for the signed-in session. */
export function useCan(permission: Permission, projectId?: string): boolean {
  return sessionAllows(useSession().data, permission, projectId)
}
