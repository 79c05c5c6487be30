import { presentedApiKey } from '@tracewell/auth'
import { findTeamProject, membershipsOf, rolesOnProject, teamRoleOf } from '@tracewell/db'
import { answerFailedKey, BadRequestError, ForbiddenError, keyStoreUnavailable, NotFoundError, UnauthorizedError, verifyPresentedKey } from '@tracewell/http'
import { effectiveProjectRole, keyAllows, permissions, roleAllows, teamKeyAllows, type Permission, type ProjectRole } from '@tracewell/policy'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { csrfFailure } from '../console/csrf.ts'
import type { Principal } from './principal.ts'

// The one authorization hook of the control plane (docs/accounts.md, docs/permissions.md). A
// route says what it needs in `config.permission`; this hook finds who is calling (an
// `x-api-key`, else a person's session cookie, else the console's team-key session) and admits
// them by @tracewell/policy's matrix, nothing else.
//
// Answers: nobody or a bad credential → 401; a resource of a team or project the caller cannot
// see (another team's, or a project their role hides) → 404, as if it did not exist; seen but
// not allowed → 403 naming the permission.

/**
 * Routes open to anyone (sign-in, accepting an invitation), to any signed-in person (/api/me), or
 * to the ADMIN_API_KEY alone (POST /api/teams: its own hook, requireAdminKey, judges it).
 */
export type RouteAccess = Permission | 'anyone' | 'signed-in' | 'admin-key'

/**
 * What a route needs, or how it is chosen from the request's path and query when one route does
 * two things (POST /api/api-key makes a project key with `?project_id=`, a team key with
 * `?team_id=`; moving the `production` label needs more than moving another). Decided before the
 * body is read.
 */
export type RouteAccessRule = RouteAccess | AccessChoice

/** A rule choosing between `choices` by the request; the first is the one for a request naming a project. */
export interface AccessChoice {
  (request: Pick<FastifyRequest, 'params' | 'query'>): RouteAccess
  readonly choices: readonly [RouteAccess, ...RouteAccess[]]
}

export function chooseAccess(choices: readonly [RouteAccess, ...RouteAccess[]], choose: (request: Pick<FastifyRequest, 'params' | 'query'>) => RouteAccess): AccessChoice {
  return Object.assign((request: Pick<FastifyRequest, 'params' | 'query'>) => choose(request), { choices })
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What calling this route needs; every route of the control plane states it. */
    permission?: RouteAccessRule
  }
  interface FastifyRequest {
    /** The team the request is about; set by `authorize` for team and project permissions. */
    teamId: string | null
    /** The permission the request was admitted by (the audit log names it); null on open routes. */
    permission: Permission | null
  }
}

/** The access a request needs: its route's `config.permission`, chosen for this request when it is a rule. */
export function accessOf(request: FastifyRequest): RouteAccess {
  const rule = request.routeOptions.config.permission
  if (rule === undefined) throw new Error(`route ${request.method} ${request.routeOptions.url} states no permission`)
  return typeof rule === 'function' ? rule(request) : rule
}

export const invalidCredentialsMessage = 'Invalid api key unauthorized'

/** The header a signed-in person's console sends to say which of their teams a team route is about. */
export const teamHeader = 'x-tracewell-team'

/**
 * The hook (`onRequest: authorize`). A callback hook, not an async one: a project key verified a
 * moment ago on its own project is admitted without a promise and a turn of the microtask queue,
 * a measurable share of a cached GET /api/promptset; everything else is judged by `judge`.
 */
export function authorize(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  let access: RouteAccess
  try {
    access = accessOf(request)
    if (access === 'anyone' || access === 'admin-key' || admitCachedProjectKey(request, access)) return done()
  } catch (error) {
    return done(error as Error)
  }
  judge(request, access).then(() => done(), done)
}

/** Admits a project key the verifier knows from a moment ago when its scopes allow; false: `judge` decides. */
function admitCachedProjectKey(request: FastifyRequest, access: Exclude<RouteAccess, 'anyone' | 'admin-key'>): boolean {
  if (access === 'signed-in' || permissions[access].on !== 'project') return false
  const secret = presentedApiKey(request.headers)
  const key = secret === undefined ? undefined : request.server.apiKeys.verifyCached(secret)
  if (key === undefined || key.kind !== 'project' || !keyAllows(key.scopes, access)) return false
  const named = namedProjectId(request)
  if (named !== undefined && named !== key.projectId) return false
  request.principal = { kind: 'key', key }
  request.apiKey = key
  request.teamId = key.teamId
  request.controlPlaneProjectId = key.projectId
  request.permission = access
  return true
}

async function judge(request: FastifyRequest, access: Exclude<RouteAccess, 'anyone' | 'admin-key'>): Promise<void> {
  const principal = await principalOf(request)
  if (principal === null) throw new UnauthorizedError(invalidCredentialsMessage)
  request.principal = principal
  if (principal.kind === 'key') request.apiKey = principal.key
  if (access === 'signed-in') {
    if (principal.kind !== 'user') throw new ForbiddenError('Only a signed-in person may; keys may not')
    return
  }
  if (permissions[access].on === 'project') await admitToProject(request, principal, access)
  else await admitToTeam(request, principal, access)
  request.permission = access
}

/**
 * Judges a second permission for a request `authorize` admitted, on the same project or team:
 * for what the body decides (an experiment that runs a prompt calls a model). 403 naming it.
 */
export async function requirePermission(request: FastifyRequest, permission: Permission): Promise<void> {
  const principal = request.principal
  if (principal === null) throw new UnauthorizedError(invalidCredentialsMessage)
  if (principal.kind === 'key') {
    const key = principal.key
    const allowed = key.kind === 'project' ? permissions[permission].on === 'project' && keyAllows(key.scopes, permission) : teamKeyAllows(permission)
    if (!allowed) throw refused(permission)
    return
  }
  const role = await roleOf(request, principal.user.id, permission)
  if (role === undefined || !roleAllows(role, permission)) throw refused(permission)
}

/** A person's role for judging `permission` on the request's project or team. */
async function roleOf(request: FastifyRequest, userId: string, permission: Permission): Promise<ProjectRole | undefined> {
  if (permissions[permission].on === 'project' && request.controlPlaneProjectId !== null) {
    const roles = await rolesOnProject(request.server.db, request.controlPlaneProjectId, userId)
    return roles && effectiveProjectRole(roles.teamRole, roles.projectRole)
  }
  return request.teamId === null ? undefined : teamRoleOf(request.server.db, request.teamId, userId)
}

async function principalOf(request: FastifyRequest): Promise<Principal | null> {
  const secret = presentedApiKey(request.headers)
  if (secret !== undefined) {
    const key = await verifyPresentedKey(request.server, secret, request.log)
    if (key === null) {
      await answerFailedKey(request.server, request.ip)
      return null
    }
    return { kind: 'key', key }
  }
  const userSessions = request.server.userSessions
  if (userSessions?.presented(request)) {
    const user = await userSessions.userOf(request).catch((error: unknown) => {
      request.log.warn({ err: error }, 'session lookup failed')
      throw keyStoreUnavailable()
    })
    if (user !== null) {
      const failure = csrfFailure(request)
      if (failure) throw failure
      return { kind: 'user', user }
    }
  }
  const consoleSessions = request.server.consoleSessions
  if (consoleSessions?.presented(request)) {
    const key = await consoleSessions.callerOf(request).catch((error: unknown) => {
      request.log.warn({ err: error }, 'console session key lookup failed')
      throw keyStoreUnavailable()
    })
    if (key !== null) {
      const failure = csrfFailure(request)
      if (failure) throw failure
      return { kind: 'key', key }
    }
  }
  return null
}

function refused(permission: Permission): Error {
  return new ForbiddenError(`Not allowed: this needs the permission ${permission} (docs/permissions.md)`)
}

/** The project a request names: its `:projectId` path parameter, else `?project_id=`. */
function namedProjectId(request: FastifyRequest): string | undefined {
  const fromPath = (request.params as Record<string, unknown> | undefined)?.projectId
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.project_id
  const named = typeof fromPath === 'string' ? fromPath : typeof fromQuery === 'string' ? fromQuery : undefined
  if (named === undefined || named === '') return undefined
  // Checked here, before the route's validator would: Postgres refuses the character in the lookup.
  if (named.includes('\u0000')) throw new BadRequestError(`${typeof fromPath === 'string' ? 'params/projectId' : 'querystring/project_id'}: must not contain the NUL character (\\u0000)`)
  return named
}

async function admitToProject(request: FastifyRequest, principal: Principal, permission: Permission): Promise<void> {
  if (principal.kind === 'key' && principal.key.kind === 'project') {
    const key = principal.key
    const named = namedProjectId(request)
    if (named !== undefined && named !== key.projectId) throw new NotFoundError('Project not found')
    if (!keyAllows(key.scopes, permission)) throw refused(permission)
    request.teamId = key.teamId
    request.controlPlaneProjectId = key.projectId
    return
  }
  const projectId = namedProjectId(request)
  if (projectId === undefined) throw new BadRequestError('querystring/project_id: required with a team key or a signed-in session')
  if (principal.kind === 'key') {
    const project = await findTeamProject(request.server.db, principal.key.teamId, projectId)
    if (project === undefined) throw new NotFoundError('Project not found')
    if (!teamKeyAllows(permission)) throw refused(permission)
    request.teamId = principal.key.teamId
    request.controlPlaneProjectId = project.id
    return
  }
  const roles = await rolesOnProject(request.server.db, projectId, principal.user.id)
  const role = roles === undefined ? 'none' : effectiveProjectRole(roles.teamRole, roles.projectRole)
  if (roles === undefined || role === 'none') throw new NotFoundError('Project not found')
  if (!roleAllows(role, permission)) throw refused(permission)
  request.teamId = roles.teamId
  request.controlPlaneProjectId = projectId
}

/** The team a request names: `:teamId`, else `?team_id=`, else the x-tracewell-team header. */
function namedTeamId(request: FastifyRequest): string | undefined {
  const fromPath = (request.params as Record<string, unknown> | undefined)?.teamId
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.team_id
  const fromHeader = request.headers[teamHeader]
  const named = [fromPath, fromQuery, fromHeader].find((value): value is string => typeof value === 'string' && value !== '')
  if (named?.includes('\u0000')) throw new BadRequestError('team: must not contain the NUL character (\\u0000)')
  return named
}

async function admitToTeam(request: FastifyRequest, principal: Principal, permission: Permission): Promise<void> {
  const named = namedTeamId(request)
  if (principal.kind === 'key') {
    if (principal.key.kind === 'project') throw refused(permission)
    if (named !== undefined && named !== principal.key.teamId) throw new NotFoundError('Team not found')
    if (!teamKeyAllows(permission)) throw refused(permission)
    request.teamId = principal.key.teamId
    return
  }
  const teamId = named ?? (await firstTeamOf(request, principal.user.id))
  const role = teamId === undefined ? undefined : await teamRoleOf(request.server.db, teamId, principal.user.id)
  if (teamId === undefined || role === undefined) throw new NotFoundError('Team not found')
  if (!roleAllows(role, permission)) throw refused(permission)
  request.teamId = teamId
}

/** A person who names no team works in their first one (most people have one). */
async function firstTeamOf(request: FastifyRequest, userId: string): Promise<string | undefined> {
  return (await membershipsOf(request.server.db, userId))[0]?.teamId
}
