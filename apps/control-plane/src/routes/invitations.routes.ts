import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { newSecretToken, secretTokenHash } from '@tracewell/auth'
import {
  createInvitation,
  findInvitationByTokenHash,
  findUserCredentialsByEmail,
  listOpenInvitations,
  listTeamProjects,
  markInvitationAccepted,
  markInvitationMailed,
  markUserEmailVerified,
  revokeInvitation,
  teamInvitationsSince,
  teamRoleOf,
  type InvitationByToken,
} from '@tracewell/db'
import { BadRequestError, ConflictError, ForbiddenError, GoneError, NotFoundError, TooManyRequestsError } from '@tracewell/http'
import type { Mailer } from '@tracewell/notifications'
import { consolePageUrl, linkBase } from '../accounts/account-links.ts'
import { invitationMail } from '../accounts/account-mail.ts'
import { AcceptBodySchema, CreatedInvitationSchema, CreateInvitationBodySchema, errorResponses, IdSchema, InvitationPreviewSchema, InvitationSchema, JoinedSchema, LinkTokenParamsSchema } from '@tracewell/api-schemas'
import { authorize } from '../accounts/authorize.ts'
import { checkProjectGrants, granterRoleOf, requireMayGrant } from '../accounts/grants.ts'
import { createPasswordAccount, joinTeam } from '../accounts/new-account.ts'
import { signInAfterJoining } from '../accounts/sign-in-after-joining.ts'
import type { SignupMode } from '../accounts/signup-mode.ts'
import { requireCsrfHeader } from '../console/csrf.ts'

// Invitations (docs/accounts.md#invitations-and-members; issue 44 §2): an admin invites an email
// with a role and per-project roles; the link is mailed over SMTP when the server has it, and
// answered in any case for the admin to copy. It works once, for 7 days, and can be revoked.

export const invitationLifetimeMs = 7 * 24 * 60 * 60 * 1000
/** Invitations a team may make in an hour: far above a team's onboarding, far below a spam run. */
export const invitationsPerTeamHour = 100

export interface InvitationRoutesOptions {
  /** SMTP_URL and MAIL_FROM's mailer; undefined: links are only shown, never mailed. */
  mailer: Mailer | undefined
  /** PUBLIC_URL: where the links point; else where the inviting admin's request came. */
  publicUrl: string | undefined
  signup: SignupMode
}

const TeamParamsSchema = Type.Object({ teamId: IdSchema })
const InvitationParamsSchema = Type.Object({ teamId: IdSchema, invitationId: Type.String({ minLength: 1, maxLength: 64 }) })

const tags = ['invitations']

/** 404 for a link that never was, 410 naming why one that was no longer works. */
function usable(invitation: InvitationByToken | undefined): InvitationByToken {
  if (invitation === undefined) throw new NotFoundError('No such invitation: check that the whole link was copied')
  if (invitation.state === 'accepted') throw new GoneError('This invitation was already used; ask for a new one if you still need to join')
  if (invitation.state === 'revoked') throw new GoneError('This invitation was revoked (or replaced by a newer one); ask for a new one')
  if (invitation.state === 'expired') throw new GoneError(`This invitation expired at ${invitation.expiresAt}; ask for a new one`)
  return invitation
}

export const invitationRoutes: FastifyPluginAsyncTypebox<InvitationRoutesOptions> = async (app, options) => {
  /** Each invitation may be a mail to a stranger: a team (or a stolen admin session) cannot flood inboxes. */
  async function refuseBeyondHourlyLimit(teamId: string): Promise<void> {
    const hourAgo = new Date(Date.now() - 3_600_000)
    const { count, oldest } = await teamInvitationsSince(app.db, teamId, hourAgo)
    if (count < invitationsPerTeamHour) return
    const retryAfterSeconds = Math.max(1, Math.ceil(((oldest ?? new Date()).getTime() + 3_600_000 - Date.now()) / 1000))
    throw new TooManyRequestsError(`This team made ${count} invitations in the last hour, the most an hour allows (${invitationsPerTeamHour}); try again in ${retryAfterSeconds} s`, retryAfterSeconds)
  }

  app.post(
    '/api/teams/:teamId/invitations',
    {
      onRequest: authorize,
      config: { permission: 'members:manage' },
      schema: {
        operationId: 'createInvitation',
        security: [{ userSession: [] }, { apiKey: [] }],
        summary: 'Invite someone to the team',
        description:
          'Up to your own role (an admin invites admins, members and viewers; only an owner invites owners). The link works once, for 7 days; it is mailed when SMTP_URL and MAIL_FROM are set, and answered here in any case. Inviting an email again revokes its earlier open invitation. A team makes at most 100 invitations an hour (429 with Retry-After beyond).',
        tags,
        params: TeamParamsSchema,
        body: CreateInvitationBodySchema,
        response: { 201: CreatedInvitationSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const teamId = request.teamId as string
      const { email, role } = request.body
      const projectRoles = request.body.projectRoles ?? []
      const granter = await granterRoleOf(request)
      requireMayGrant(granter, role, 'body/role')
      await checkProjectGrants(app.db, teamId, projectRoles, granter)
      const existing = await findUserCredentialsByEmail(app.db, email)
      if (existing !== undefined && (await teamRoleOf(app.db, teamId, existing.id)) !== undefined) {
        throw new ConflictError(`body/email: ${email} is already a member of this team; change their role instead`)
      }

      await refuseBeyondHourlyLimit(teamId)
      const { token, tokenHash } = newSecretToken()
      const inviter = request.principal?.kind === 'user' ? request.principal.user : null
      const invitation = await createInvitation(app.db, {
        teamId, email, role, projectRoles, tokenHash, invitedByUserId: inviter?.id ?? null, expiresAt: new Date(Date.now() + invitationLifetimeMs),
      })
      const url = consolePageUrl(linkBase(options.publicUrl, request), `/invitations/${token}`)

      let mailError: string | null = 'the server has no SMTP_URL and MAIL_FROM: copy the link to the person'
      if (options.mailer !== undefined) {
        const teamName = (await findInvitationByTokenHash(app.db, tokenHash))?.teamName ?? ''
        const outcome = await options.mailer.send(invitationMail(email, { teamName, inviterName: inviter?.name ?? null, role, url, expiresAt: invitation.expiresAt }))
        if (outcome.ok) await markInvitationMailed(app.db, invitation.id)
        else request.log.warn({ invitationId: invitation.id, error: outcome.error }, 'invitation mail not sent')
        mailError = outcome.ok ? null : outcome.error
      }
      void reply.header('cache-control', 'no-store')
      return reply.code(201).send({ id: invitation.id, url, expiresAt: invitation.expiresAt, mailed: mailError === null, mailError })
    },
  )

  app.get(
    '/api/teams/:teamId/invitations',
    {
      onRequest: authorize,
      config: { permission: 'members:read' },
      schema: {
        operationId: 'listInvitations',
        security: [{ userSession: [] }, { apiKey: [] }],
        summary: "The team's open invitations",
        description: 'Pending and expired ones, newest first; accepted and revoked ones are not listed.',
        tags,
        params: TeamParamsSchema,
        response: { 200: Type.Object({ invitations: Type.Array(InvitationSchema) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const invitations = await listOpenInvitations(app.db, request.teamId as string)
      return { invitations: invitations.map(({ teamId: _teamId, state, ...invitation }) => ({ ...invitation, state: state === 'pending' ? ('pending' as const) : ('expired' as const) })) }
    },
  )

  app.delete(
    '/api/teams/:teamId/invitations/:invitationId',
    {
      onRequest: authorize,
      config: { permission: 'members:manage' },
      schema: {
        operationId: 'revokeInvitation',
        security: [{ userSession: [] }, { apiKey: [] }],
        summary: 'Revoke an invitation',
        description: 'Its link stops working at once.',
        tags,
        params: InvitationParamsSchema,
        response: { 204: Type.Null({ description: 'revoked' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      if (!(await revokeInvitation(app.db, request.teamId as string, request.params.invitationId))) throw new NotFoundError('No open invitation with this id in this team')
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/invitations/:token',
    {
      onRequest: authorize,
      config: { permission: 'anyone' },
      schema: {
        operationId: 'getInvitation',
        summary: 'What an invitation link is for',
        description: 'For the console page the link opens: the team, the email and role, and whether that email has an account. 404 for an unknown link, 410 for one used, revoked or expired.',
        tags,
        security: [],
        params: LinkTokenParamsSchema,
        response: { 200: InvitationPreviewSchema, ...errorResponses(400, 404, 410) },
      },
    },
    async (request, reply) => {
      const invitation = usable(await findInvitationByTokenHash(app.db, secretTokenHash(request.params.token)))
      const accountExists = (await findUserCredentialsByEmail(app.db, invitation.email)) !== undefined
      void reply.header('cache-control', 'no-store')
      return { teamName: invitation.teamName, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt, accountExists, signupAllowed: options.signup !== 'off' }
    },
  )

  app.post(
    '/api/invitations/:token/accept',
    {
      onRequest: [authorize, requireCsrfHeader],
      config: { permission: 'anyone' },
      schema: {
        operationId: 'acceptInvitation',
        summary: 'Accept an invitation',
        description:
          'Without a session: creates the account of the invited email with this name and password (201, signed in). From a signed-in session with that email: joins the team (200). Once only. Requires the x-tracewell-csrf: 1 header.',
        tags,
        security: [],
        params: LinkTokenParamsSchema,
        body: AcceptBodySchema,
        response: { 200: JoinedSchema, 201: JoinedSchema, ...errorResponses(400, 403, 404, 409, 410) },
      },
    },
    async (request, reply) => {
      const signedIn = app.userSessions?.presented(request) ? await app.userSessions.userOf(request) : null
      const { user, created, teamId } = await app.db.transaction().execute(async (trx) => {
        const invitation = usable(await findInvitationByTokenHash(trx, secretTokenHash(request.params.token), { forUpdate: true }))
        let joining
        if (signedIn !== null) {
          if (signedIn.email.toLowerCase() !== invitation.email.toLowerCase()) {
            throw new ForbiddenError(`This invitation is for ${invitation.email}, and you are signed in as ${signedIn.email}: sign out first, or ask for an invitation to your address`)
          }
          if (invitation.mailed && !signedIn.emailVerified) await markUserEmailVerified(trx, signedIn.id)
          joining = { user: signedIn, created: false }
        } else {
          if ((await findUserCredentialsByEmail(trx, invitation.email)) !== undefined) {
            throw new ConflictError(`An account with ${invitation.email} exists: sign in with it, then accept the invitation`)
          }
          if (options.signup === 'off') throw new ForbiddenError('New accounts are turned off on this server (SIGNUP=off): ask an admin to make yours through single sign-on')
          const { name, password } = request.body
          if (name === undefined) throw new BadRequestError('body/name: required to create your account')
          if (password === undefined) throw new BadRequestError('body/password: required to create your account')
          // A link shown to the admin to copy proves nothing about the mailbox: only a mailed one verifies the address.
          joining = { user: await createPasswordAccount(trx, { email: invitation.email, name, password, emailVerified: invitation.mailed }), created: true }
        }
        if ((await teamRoleOf(trx, invitation.teamId, joining.user.id)) !== undefined) throw new ConflictError(`You are already a member of ${invitation.teamName}`)
        // Projects deleted since the invitation was made are left out.
        const projects = new Set((await listTeamProjects(trx, invitation.teamId)).map((project) => project.id))
        await joinTeam(trx, invitation.teamId, joining.user.id, invitation.role, invitation.projectRoles.filter((grant) => projects.has(grant.projectId)))
        await markInvitationAccepted(trx, invitation.id, joining.user.id)
        return { ...joining, teamId: invitation.teamId }
      })
      // A new account is signed in at once; a signed-in person who joined keeps their session.
      const joined = created ? await signInAfterJoining(request, reply, user, teamId) : { user: { id: user.id, email: user.email, name: user.name }, teamId, signedIn: true }
      return reply.code(created ? 201 : 200).send(joined)
    },
  )
}
