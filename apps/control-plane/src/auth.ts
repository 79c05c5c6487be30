import { presentedApiKey, secretsMatch, type KeyKind, type VerifiedKey } from '@tracewell/auth'
import { findTeamProject } from '@tracewell/db'
import { answerFailedKey, BadRequestError, ForbiddenError, keyStoreUnavailable, NotFoundError, requireKey as requireApiKey, UnauthorizedError, verifyPresentedKey } from '@tracewell/http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { csrfFailure } from './console/csrf.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The project a project-scoped request is about; set by `requireProjectAccess`. */
    controlPlaneProjectId: string | null
  }
}

/** The one 401 message of every control-plane endpoint taking `x-api-key`. */
export const invalidApiKeyMessage = 'Invalid api key unauthorized'
export const invalidAdminKeyMessage = 'Invalid admin key unauthorized'


/**
 * The control plane's key hook (@tracewell/http's requireKey with this API's 401 message). Team-key
 * routes also admit the web console's session cookie, as the team key its user signed in with,
 * when no key is presented (a header always wins, and is judged alone). Requests that change data
 * that way must carry the CSRF header (console/csrf.ts).
 */
export function requireKey(kind: KeyKind) {
  return requireApiKey(kind, { unauthorized: invalidApiKeyMessage, withoutKey: kind === 'team' ? consoleSessionCaller : undefined })
}

/** The team key the request's console session stands for; null without a session. */
function consoleSessionCaller(request: FastifyRequest): Promise<VerifiedKey | null> | null {
  const sessions = request.server.consoleSessions
  if (sessions === null || !sessions.presented(request)) return null
  return sessions.callerOf(request).then(
    (caller) => {
      const failure = caller === null ? undefined : csrfFailure(request)
      if (failure) throw failure
      return caller
    },
    (error: unknown) => {
      request.log.warn({ err: error }, 'console session key lookup failed')
      throw keyStoreUnavailable()
    },
  )
}

export const requireTeamKey = requireKey('team')
export const requireProjectKey = requireKey('project')

/**
 * A hook for routes about one project: a project key (its own project), or a team key with
 * `?project_id=` naming one of the team's projects (what the console and team tooling use). A
 * project of another team reads as missing: 404, as everywhere. Without an `x-api-key` header the
 * console's session cookie stands for its team key, as on team-key routes (CSRF header included).
 */
export function requireProjectAccess(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const secret = presentedApiKey(request.headers)
  const admit = (key: VerifiedKey | null): Promise<void> | void => {
    if (key === null) throw new UnauthorizedError(invalidApiKeyMessage)
    request.apiKey = key
    if (key.kind === 'project') {
      request.controlPlaneProjectId = key.projectId
      return
    }
    const projectId = (request.query as Record<string, unknown> | undefined)?.project_id
    if (typeof projectId !== 'string' || projectId === '') throw new BadRequestError('querystring/project_id: required with a team key')
    // Checked here, before the route's validator would: Postgres refuses the character in the lookup.
    if (projectId.includes('\u0000')) throw new BadRequestError('querystring/project_id: must not contain the NUL character (\\u0000)')
    return findTeamProject(request.server.db, key.teamId, projectId).then((project) => {
      if (project === undefined) throw new NotFoundError('Project not found')
      request.controlPlaneProjectId = project.id
    })
  }
  if (secret === undefined) {
    const sessions = request.server.consoleSessions
    if (sessions === null || !sessions.presented(request)) return done(new UnauthorizedError(invalidApiKeyMessage))
    sessions
      .callerOf(request)
      .catch((error: unknown) => {
        request.log.warn({ err: error }, 'console session key lookup failed')
        throw keyStoreUnavailable()
      })
      .then((caller) => {
        const failure = caller === null ? undefined : csrfFailure(request)
        if (failure) throw failure
        return admit(caller)
      })
      .then(() => done(), done)
    return
  }
  // An unknown key's 401 waits its turn (answerFailedKey); a correct key is never held back.
  Promise.resolve(verifyPresentedKey(request.server, secret, request.log))
    .then(async (key) => {
      if (key === null) await answerFailedKey(request.server, request.ip)
      return admit(key)
    })
    .then(() => done(), done)
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a requireSpendAccess route does, as its 403 to a project key names it ("Creating LLM connections"). */
    spends?: string
  }
}

/**
 * A 403 for a project key about to spend its project's LLM connections. Project keys ship inside
 * applications, so whoever holds one must not run models on the project's bill.
 */
export function refuseProjectKeySpend(request: FastifyRequest, what: string): void {
  if (request.apiKey?.kind === 'project') {
    throw new ForbiddenError(`${what} needs a team key (or a signed-in console session); project keys send traces, feedback and scores and read prompts and queries`)
  }
}

/**
 * requireProjectAccess for routes that create, change or run what calls a model (LLM connections,
 * evaluators, prompt experiments, the playground): a team key with `?project_id=` or the console's
 * session; a project key gets 403 naming what the route (its `config.spends`) needs.
 */
export function requireSpendAccess(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  requireProjectAccess(request, reply, (error) => {
    if (error !== undefined) return done(error)
    try {
      refuseProjectKeySpend(request, request.routeOptions.config.spends ?? `${request.method} ${request.routeOptions.url ?? ''}`)
      done()
    } catch (refusal) {
      done(refusal as Error)
    }
  })
}

/**
 * The SDKs' prompt lookup (GET /api/promptset): a project key, judged on the cached, promise-free
 * path as before; without an `x-api-key` header, the console's session with `?project_id=` (its
 * preview of a prompt with variables filled).
 */
export function requireProjectKeyOrConsoleSession(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  if (request.server.consoleSessions === null || presentedApiKey(request.headers) !== undefined) return requireProjectKey(request, reply, done)
  requireProjectAccess(request, reply, done)
}

/** The admin key hook; without a configured ADMIN_API_KEY nobody is an admin. */
export function requireAdminKey(adminApiKey: string | undefined) {
  return async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    const presented = request.headers['x-admin-key']
    const secret = typeof presented === 'string' && presented !== '' ? presented : undefined
    if (adminApiKey === undefined || secret === undefined || !secretsMatch(secret, adminApiKey)) {
      if (secret !== undefined) await answerFailedKey(request.server, request.ip)
      throw new UnauthorizedError(invalidAdminKeyMessage)
    }
  }
}

function caller(request: FastifyRequest): VerifiedKey {
  if (request.apiKey === null) throw new UnauthorizedError(invalidApiKeyMessage)
  return request.apiKey
}

export function callerTeamId(request: FastifyRequest): string {
  return caller(request).teamId
}

/** The caller's key, as recorded beside what it changed (who moved a prompt label). */
export function callerKeyId(request: FastifyRequest): string {
  return caller(request).id
}

export function callerProjectId(request: FastifyRequest): string {
  if (request.controlPlaneProjectId) return request.controlPlaneProjectId
  const { projectId } = caller(request)
  if (projectId === null) throw new UnauthorizedError(invalidApiKeyMessage)
  return projectId
}
