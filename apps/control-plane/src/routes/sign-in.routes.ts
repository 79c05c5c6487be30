import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { verifyDecoyPassword, verifyPassword } from '@tracewell/auth'
import { findUserCredentialsByEmail } from '@tracewell/db'
import { answerFailedKey, keyStoreUnavailable, UnauthorizedError } from '@tracewell/http'
import { meOf } from '../accounts/me.ts'
import type { UserSessions } from '../accounts/user-sessions.ts'
import { csrfHeader, requireCsrfHeader } from '../console/csrf.ts'
import { errorResponses, MeSchema, SignInBodySchema } from '@tracewell/api-schemas'

// Signing in with an email and password, and out (docs/accounts.md#people-and-sign-in).

export interface SignInRoutesOptions {
  userSessions: UserSessions
}

/** The one answer to an unknown email, a wrong password and an account without one: nothing to tell them apart. */
export const wrongCredentialsMessage = 'Wrong email or password'

export const signInRoutes: FastifyPluginAsyncTypebox<SignInRoutesOptions> = async (app, { userSessions }) => {
  // Also on sign-in and sign-out (requireCsrfHeader): a cross-site page must not sign a browser in
  // (to an attacker's account or team) or out.

  const tags = ['accounts']

  app.post(
    '/api/auth/sign-in',
    {
      onRequest: requireCsrfHeader,
      config: { permission: 'anyone' },
      schema: {
        operationId: 'signIn',
        summary: 'Sign in with an email and password',
        description:
          `Answers with the person and their teams, and sets the session cookie tw_sid (HttpOnly, SameSite=Lax, Secure over HTTPS); a new session every time. Requires the ${csrfHeader}: 1 header. ` +
          'An unknown email and a wrong password get the same 401 in about the same time; failed sign-ins are slowed per client address, a correct password never is.',
        tags,
        security: [],
        body: SignInBodySchema,
        response: { 200: MeSchema, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body
      const user = await findUserCredentialsByEmail(app.db, email.trim())
      // Every path spends one Argon2id check: an unknown email costs what a wrong password does.
      const correct = user?.passwordHash == null ? await verifyDecoyPassword(password) : await verifyPassword(password, user.passwordHash)
      if (user === undefined || !correct) {
        await answerFailedKey(app, request.ip)
        throw new UnauthorizedError(wrongCredentialsMessage)
      }
      await userSessions.start(request, reply, user.id)
      void reply.header('cache-control', 'no-store')
      return meOf(app.db, user)
    },
  )

  app.post(
    '/api/auth/sign-out',
    {
      onRequest: requireCsrfHeader,
      // Open: a sign-out with a session that already ended still clears the cookie.
      config: { permission: 'anyone' },
      schema: {
        operationId: 'signOut',
        summary: 'Sign out: the session ends on the server, on every instance at once',
        description: `The cookie is refused from then on, even if replayed. Requires the ${csrfHeader}: 1 header.`,
        tags,
        security: [{ userSession: [] }],
        response: { 204: Type.Null({ description: 'signed out' }), ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const user = await userSessions.userOf(request).catch((error: unknown) => {
        request.log.warn({ err: error }, 'session lookup failed')
        throw keyStoreUnavailable()
      })
      await userSessions.end(request, reply, user)
      return reply.code(204).send(null)
    },
  )
}
