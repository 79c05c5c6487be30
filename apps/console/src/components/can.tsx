import type { ReactNode } from 'react'
import { permissions, roleAllows, teamKeyAllows, type Permission } from '@tracewell/policy'
import { useSession } from '../api/session.api.ts'
import type { Session } from '../api/types.ts'
import { useOptionalProject } from './project-scope.tsx'

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

/** Whether the signed-in session may `permission`, on `projectId` or else the page's project. */
export function useCan(permission: Permission, projectId?: string): boolean {
  const scope = useOptionalProject()
  return sessionAllows(useSession().data, permission, projectId ?? scope?.projectId)
}

/** Its children only for a session that may `permission`: no control is shown that would be refused. */
export function Can({ permission, projectId, children }: { permission: Permission; projectId?: string; children: ReactNode }) {
  return useCan(permission, projectId) ? children : null
}
