import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { countTeamOwnersForUpdate, endUserSessions, listTeamMembers, removeTeamMember, putTeamMember, setProjectRole, type Executor } from '@tracewell/db'
import { ConflictError, ForbiddenError, NotFoundError } from '@tracewell/http'
import type { TeamRole } from '@tracewell/policy'
import { ChangeMemberBodySchema, errorResponses, IdSchema, type TeamMember, TeamMemberSchema } from '@tracewell/api-schemas'
import { authorize } from '../accounts/authorize.ts'
import { checkProjectGrants, granterRoleOf, requireMayGrant, requireMayManage } from '../accounts/grants.ts'

// A team's members (docs/accounts.md#invitations-and-members; issue 44 §2): listed, re-roled (the
// team role and per-project roles), removed, or leaving. Nobody grants above their own role or
// touches someone above it; the last owner can be neither demoted nor removed, nor leave. A
// removed person's sessions end at once.

const TeamParamsSchema = Type.Object({ teamId: IdSchema })
const MemberParamsSchema = Type.Object({ teamId: IdSchema, userId: Type.String({ minLength: 1, maxLength: 64 }) })

const tags = ['members']

async function memberOf(db: Executor, teamId: string, userId: string): Promise<TeamMember> {
  const member = (await listTeamMembers(db, teamId)).find((candidate) => candidate.userId === userId)
  if (member === undefined) throw new NotFoundError('No such member in this team')
  return member
}

/** 409 when `member` is the team's last owner and would stop being one (call inside the transaction that changes it). */
async function refuseLastOwner(trx: Executor, teamId: string, member: TeamMember, change: 'demoted' | 'removed' | 'leave'): Promise<void> {
  if (member.role !== 'owner' || (await countTeamOwnersForUpdate(trx, teamId)) > 1) return
  const said = change === 'leave' ? 'The last owner cannot leave the team' : `The last owner cannot be ${change}`
  throw new ConflictError(`${said}: make another member an owner first`)
}

export const memberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/teams/:teamId/members',
    {
      onRequest: authorize,
      config: { permission: 'members:read' },
      schema: {
        operationId: 'listMembers',
        security: [{ userSession: [] }, { apiKey: [] }],
        summary: "The team's members and their roles",
        tags,
        params: TeamParamsSchema,
        response: { 200: Type.Object({ members: Type.Array(TeamMemberSchema) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({ members: await listTeamMembers(app.db, request.teamId as string) }),
  )

  app.patch(
    '/api/teams/:teamId/members/:userId',
    {
      onRequest: authorize,
      config: { permission: 'members:manage' },
      schema: {
        operationId: 'changeMember',
        security: [{ userSession: [] }, { apiKey: [] }],
        summary: "Change a member's team role or per-project roles",
        description: 'Up to your own role, for members not above it. The last owner cannot be demoted (409).',
        tags,
        params: MemberParamsSchema,
        body: ChangeMemberBodySchema,
        response: { 200: TeamMemberSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const teamId = request.teamId as string
      const { userId } = request.params
      const { role, projectRoles = [] } = request.body
      const granter = await granterRoleOf(request)
      return app.db.transaction().execute(async (trx) => {
        const member = await memberOf(trx, teamId, userId)
        requireMayManage(granter, member.role)
        if (role !== undefined) requireMayGrant(granter, role, 'body/role')
        // Overrides above the granter's role may be taken away (null), never given.
        const given = projectRoles.flatMap((grant) => (grant.role === null ? [] : [{ projectId: grant.projectId, role: grant.role }]))
        await checkProjectGrants(trx, teamId, given, granter)
        if (role !== undefined && role !== 'owner') await refuseLastOwner(trx, teamId, member, 'demoted')
        if (role !== undefined) await putTeamMember(trx, teamId, userId, role)
        for (const grant of projectRoles) await setProjectRole(trx, grant.projectId, userId, grant.role)
        return memberOf(trx, teamId, userId)
      })
    },
  )

  app.delete(
    '/api/teams/:teamId/members/:userId',
    {
      onRequest: authorize,
      config: { permission: 'members:manage' },
      schema: {
        operationId: 'removeMember',
        security: [{ userSession: [] }, { apiKey: [] }],
        summary: 'Remove a member from the team',
        description: "Their roles in the team and its projects go, and every session of theirs ends at once (on every replica). Not a member above your own role; not the last owner (409).",
        tags,
        params: MemberParamsSchema,
        response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const teamId = request.teamId as string
      const { userId } = request.params
      const granter: TeamRole = await granterRoleOf(request)
      await app.db.transaction().execute(async (trx) => {
        const member = await memberOf(trx, teamId, userId)
        requireMayManage(granter, member.role)
        await refuseLastOwner(trx, teamId, member, 'removed')
        await removeTeamMember(trx, teamId, userId)
        // Sessions are not per team: ending them all is what makes a removal take effect at once
        // in any browser the person left signed in, as issue 44 asks.
        await endUserSessions(trx, userId)
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/teams/:teamId/leave',
    {
      onRequest: authorize,
      config: { permission: 'team:leave' },
      schema: {
        operationId: 'leaveTeam',
        security: [{ userSession: [] }],
        summary: 'Leave the team',
        description: 'The signed-in person leaves (their sessions go on: they may belong to other teams). The last owner cannot leave (409).',
        tags,
        params: TeamParamsSchema,
        response: { 204: Type.Null({ description: 'left' }), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const principal = request.principal
      if (principal?.kind !== 'user') throw new ForbiddenError('Only a signed-in person leaves a team; a key may not')
      const teamId = request.teamId as string
      await app.db.transaction().execute(async (trx) => {
        const member = await memberOf(trx, teamId, principal.user.id)
        await refuseLastOwner(trx, teamId, member, 'leave')
        await removeTeamMember(trx, teamId, principal.user.id)
      })
      return reply.code(204).send(null)
    },
  )
}
