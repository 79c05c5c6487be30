import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { hashPassword, passwordProblem, verifyPassword } from '@tracewell/auth'
import { endUserSession, endUserSessions, findUserCredentialsById, listUserSessions, renameUser, setUserPasswordHash } from '@tracewell/db'
import { answerFailedKey, BadRequestError, NotFoundError, UnauthorizedError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { authorize } from '../accounts/authorize.ts'
import { meOf } from '../accounts/me.ts'
import type { SessionUser, UserSessions } from '../accounts/user-sessions.ts'
import { ChangePasswordBodySchema, errorResponses, MeSchema, OwnSessionListSchema, OwnSessionParamsSchema, ProfileBodySchema } from '@tracewell/api-schemas'

// A signed-in person's own account (docs/accounts.md#your-account): who they are and where,
// their name, their password, their sessions. Keys have no account: these are 403 to them.

export interface MeRoutesOptions {
  userSessions: UserSessions
}

export const wrongCurrentPasswordMessage = 'body/currentPassword: not your current password'

function signedIn(request: FastifyRequest): SessionUser {
  const principal = request.principal
  if (principal?.kind !== 'user') throw new UnauthorizedError('Not signed in')
  return principal.user
}

export const meRoutes: FastifyPluginAsyncTypebox<MeRoutesOptions> = async (app, { userSessions }) => {
  const tags = ['accounts']
  const security = [{ userSession: [] }]
  const config = { permission: 'signed-in' } as const

  app.get(
    '/api/me',
    {
      onRequest: authorize,
      config,
      schema: {
        operationId: 'getMe',
        summary: 'Who is signed in: the person, their teams and role on each, and the projects they may see with their role there',
        tags,
        security,
        response: { 200: MeSchema, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      void reply.header('cache-control', 'no-store')
      return meOf(app.db, signedIn(request))
    },
  )

  app.patch(
    '/api/me',
    {
      onRequest: authorize,
      config,
      schema: {
        operationId: 'updateMe',
        summary: 'Change your display name',
        tags,
        security,
        body: ProfileBodySchema,
        response: { 200: MeSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const name = request.body.name.trim()
      if (name === '') throw new BadRequestError('body/name: must not be blank')
      const user = await renameUser(app.db, signedIn(request).id, name)
      if (user === undefined) throw new UnauthorizedError('Not signed in')
      return meOf(app.db, user)
    },
  )

  app.put(
    '/api/me/password',
    {
      onRequest: authorize,
      config,
      schema: {
        operationId: 'changeMyPassword',
        summary: 'Change your password: every other session of yours ends',
        description: 'Needs the current password. The new one must meet the password rule (docs/accounts.md). This session stays signed in.',
        tags,
        security,
        body: ChangePasswordBodySchema,
        response: { 204: Type.Null({ description: 'changed' }), ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const user = signedIn(request)
      const { currentPassword, newPassword } = request.body
      const credentials = await findUserCredentialsById(app.db, user.id)
      if (credentials === undefined) throw new UnauthorizedError('Not signed in')
      if (credentials.passwordHash === null) throw new BadRequestError('body/currentPassword: this account signs in with single sign-on and has no password to change')
      if (!(await verifyPassword(currentPassword, credentials.passwordHash))) {
        // Slowed like a failed sign-in: a stolen session must not become a password oracle.
        await answerFailedKey(app, request.ip)
        throw new BadRequestError(wrongCurrentPasswordMessage)
      }
      const problem = passwordProblem(newPassword, { email: user.email, name: user.name })
      if (problem !== undefined) throw new BadRequestError(`body/newPassword: ${problem}`)
      const passwordHash = await hashPassword(newPassword)
      await app.db.transaction().execute(async (trx) => {
        await setUserPasswordHash(trx, user.id, passwordHash)
        await endUserSessions(trx, user.id, user.sessionId)
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/me/sessions',
    {
      onRequest: authorize,
      config,
      schema: {
        operationId: 'listMySessions',
        summary: 'Your live sessions (where you are signed in)',
        tags,
        security,
        response: { 200: OwnSessionListSchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const user = signedIn(request)
      const sessions = await listUserSessions(app.db, user.id, userSessions.idleMs)
      return { sessions: sessions.map((session) => ({ ...session, current: session.id === user.sessionId })) }
    },
  )

  app.delete(
    '/api/me/sessions/:sessionId',
    {
      onRequest: authorize,
      config,
      schema: {
        operationId: 'endMySession',
        summary: 'End one of your sessions (sign that browser out), on every instance at once',
        tags,
        security,
        params: OwnSessionParamsSchema,
        response: { 204: Type.Null({ description: 'ended' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const user = signedIn(request)
      if (!(await endUserSession(app.db, user.id, request.params.sessionId))) throw new NotFoundError('Session not found')
      return reply.code(204).send(null)
    },
  )
}
