import { listTeamProjects, membershipsOf, type Db } from '@tracewell/db'
import { effectiveProjectRole, type ProjectRole, type TeamRole } from '@tracewell/policy'
import type { SessionUser } from './user-sessions.ts'

// What a signed-in person is shown about themselves (GET /api/me, and the sign-in's answer): who
// they are, their teams and role on each, and the projects of each they may see with their role
// there. The console decides what to show from these roles, with @tracewell/policy.

export interface Me {
  user: { id: string; email: string; name: string }
  teams: { id: string; name: string; role: TeamRole; projects: { id: string; name: string; role: Exclude<ProjectRole, 'none'> }[] }[]
}

export async function meOf(db: Db, user: Pick<SessionUser, 'id' | 'email' | 'name'>): Promise<Me> {
  const memberships = await membershipsOf(db, user.id)
  const teams = await Promise.all(
    memberships.map(async (membership) => {
      const projects = (await listTeamProjects(db, membership.teamId)).flatMap((project) => {
        const role = effectiveProjectRole(membership.role, membership.projectRoles[project.id])
        return role === 'none' ? [] : [{ id: project.id, name: project.name, role }]
      })
      return { id: membership.teamId, name: membership.teamName, role: membership.role, projects }
    }),
  )
  return { user: { id: user.id, email: user.email, name: user.name }, teams }
}
