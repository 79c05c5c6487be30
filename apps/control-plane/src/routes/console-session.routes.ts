import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { anyTeamOwnerExists } from '@tracewell/db'
import { answerFailedKey, ForbiddenError, keyStoreUnavailable, UnauthorizedError } from '@tracewell/http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ConsoleSessions } from '../console/console-sessions.ts'
import { csrfHeader, requireCsrfHeader } from '../console/csrf.ts'
import { type ConsoleSession, ConsoleSessionSchema, errorResponses } from '@tracewell/api-schemas'

export const SignInBodySchema = Type.Object({ apiKey: Type.String({ minLength: 1, maxLength: 512, description: 'a team API key (tw_team_…)' }) })
export type SignInBody = Static<typeof SignInBodySchema>

export interface ConsoleSessionRoutesOptions {
  sessions: ConsoleSessions
  /** CONSOLE_KEY_SIGN_IN: team keys keep signing the console in once an owner account exists. */
  keySignIn: boolean
}

export const notSignedInMessage = 'Not signed in'
export const wrongKeyMessage = 'That is not a live team API key. Sign in with a team key (it starts with tw_team_).'
export const projectKeyMessage = 'That is a project key, which sends traces. The console needs a team key (it starts with tw_team_).'
export const keySignInOffMessage = 'Signing in with a team key is off now that this install has an owner account: sign in with your email and password (or set CONSOLE_KEY_SIGN_IN=true)'

function sessionBody(session: { teamId: string; teamName: string; sessionExpiresAt: number }): ConsoleSession {
  return { teamId: session.teamId, teamName: session.teamName, expiresAt: new Date(session.sessionExpiresAt).toISOString() }
}

/**
 * The console's team-key sign-in, who-am-I and sign-out (docs/console.md#sessions). Installs that
 * upgrade keep it until an owner account exists; after that only with CONSOLE_KEY_SIGN_IN=true
 * (docs/accounts.md#upgrading). Open routes: each judges its own credential.
 */
export const consoleSessionRoutes: FastifyPluginAsyncTypebox<ConsoleSessionRoutesOptions> = async (app, options) => {
  const { sessions } = options
  const config = { permission: 'anyone' } as const

  // Also on sign-in and sign-out (requireCsrfHeader): a cross-site page must not sign a browser in
  // (to an attacker's account or team) or out.

  const tags = ['console session']

  app.post(
    '/api/session',
    {
      onRequest: requireCsrfHeader,
      config,
      schema: {
        operationId: 'signInConsole',
        summary: 'Sign the console in with a team key',
        description: `Sets a signed, HttpOnly, SameSite=Strict session cookie (Secure over HTTPS); the key itself is not kept. Requires the ${csrfHeader}: 1 header. A correct key always signs in; failed sign-ins are slowed per client address, as failed key checks are everywhere.`,
        tags,
        // The team key is in the body; no credential is presented.
        security: [],
        body: SignInBodySchema,
        response: { 200: ConsoleSessionSchema, ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request, reply) => {
      if (!options.keySignIn && (await anyTeamOwnerExists(app.db))) throw new ForbiddenError(keySignInOffMessage)
      // The key is checked first, so a correct one always signs in, whatever its address (a
      // proxy every user shares) has done; only failures are slowed (answerFailedKey), as on
      // every route that checks keys.
      let key, session
      try {
        key = await app.apiKeys.verify(request.body.apiKey)
        session = key?.kind === 'team' ? await sessions.start(request, reply, key) : null
      } catch (error) {
        request.log.warn({ err: error }, 'API key lookup failed')
        throw keyStoreUnavailable()
      }
      if (session === null) {
        if (key === null) await answerFailedKey(app, request.ip)
        throw new UnauthorizedError(key?.kind === 'project' ? projectKeyMessage : wrongKeyMessage)
      }
      void reply.header('cache-control', 'no-store')
      return sessionBody(session)
    },
  )

  app.get(
    '/api/session',
    {
      config,
      schema: {
        operationId: 'getConsoleSession',
        summary: 'Who is signed in to the console',
        tags,
        security: [{ consoleSession: [] }],
        response: { 200: ConsoleSessionSchema, ...errorResponses(401, 503) },
      },
    },
    async (request, reply) => {
      const caller = await callerOrUnavailable(sessions, request)
      if (caller === null) throw new UnauthorizedError(notSignedInMessage)
      void reply.header('cache-control', 'no-store')
      return sessionBody(caller)
    },
  )

  app.delete(
    '/api/session',
    {
      onRequest: requireCsrfHeader,
      config,
      schema: {
        operationId: 'signOutConsole',
        summary: 'Sign the console out',
        description: `Ends the session on the server (its cookie is refused from then on, on every replica) and clears the cookie. Requires the ${csrfHeader}: 1 header.`,
        tags,
        security: [{ consoleSession: [] }],
        response: { 204: Type.Null({ description: 'signed out' }), ...errorResponses(403) },
      },
    },
    async (request, reply: FastifyReply) => {
      await sessions.end(request, reply)
      return reply.code(204).send(null)
    },
  )
}

async function callerOrUnavailable(sessions: ConsoleSessions, request: FastifyRequest) {
  try {
    return await sessions.callerOf(request)
  } catch (error) {
    request.log.warn({ err: error }, 'console session key lookup failed')
    throw keyStoreUnavailable()
  }
}
