import { listTeamProjects, teamRoleOf, type Executor } from '@tracewell/db'
import { BadRequestError, ForbiddenError } from '@tracewell/http'
import { mayGrant, type ProjectRole, type TeamRole } from '@tracewell/policy'
import type { FastifyRequest } from 'fastify'
import type { ProjectRoleGrant } from '@tracewell/api-schemas'

// Who may hand out which role (issue 44 §2): nobody grants above their own role, and nobody
// changes or removes a person whose role is above their own. @tracewell/policy's mayGrant decides;
// this file only finds the granter's role and names what was refused.

/** The team role of whoever makes the request, on the team `authorize` admitted it to; a team key acts as an admin. */
export async function granterRoleOf(request: FastifyRequest): Promise<TeamRole> {
  const principal = request.principal
  if (principal === null || request.teamId === null) throw new Error('granterRoleOf needs a request admitted by authorize to a team')
  if (principal.kind === 'key') return 'admin'
  const role = await teamRoleOf(request.server.db, request.teamId, principal.user.id)
  if (role === undefined) throw new ForbiddenError('You are no longer a member of this team')
  return role
}

/** 403 unless `granter` may grant `role`; `field` names what asked for it. */
export function requireMayGrant(granter: TeamRole, role: ProjectRole, field: string): void {
  if (!mayGrant(granter, role)) throw new ForbiddenError(`${field}: ${role} is above your own role (${granter}); nobody grants a role above their own`)
}

/** 403 unless `granter` may change or remove a member whose role is `current`. */
export function requireMayManage(granter: TeamRole, current: TeamRole): void {
  if (!mayGrant(granter, current)) throw new ForbiddenError(`This member is ${current}, above your own role (${granter}): only an ${current} or higher may change or remove them`)
}

/**
 * Checks per-project roles before they are stored: each project is the team's, named once, and
 * each role within the granter's reach. 400 or 403 naming the entry.
 */
export async function checkProjectGrants(db: Executor, teamId: string, grants: readonly ProjectRoleGrant[], granter: TeamRole, field = 'body/projectRoles'): Promise<void> {
  if (grants.length === 0) return
  const projects = new Set((await listTeamProjects(db, teamId)).map((project) => project.id))
  const seen = new Set<string>()
  grants.forEach((grant, index) => {
    if (!projects.has(grant.projectId)) throw new BadRequestError(`${field}/${index}/projectId: no project ${grant.projectId} in this team`)
    if (seen.has(grant.projectId)) throw new BadRequestError(`${field}/${index}/projectId: project ${grant.projectId} is named twice`)
    seen.add(grant.projectId)
    requireMayGrant(granter, grant.role, `${field}/${index}/role`)
  })
}
