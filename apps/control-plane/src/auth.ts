import { secretsMatch } from '@tracewell/auth'
import { answerFailedKey, UnauthorizedError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { invalidCredentialsMessage } from './accounts/authorize.ts'

// Who is calling is decided by the one authorization hook (accounts/authorize.ts); these read
// what it found. The admin key (POST /api/teams) is the one credential it does not judge.

declare module 'fastify' {
  interface FastifyRequest {
    /** The project a project-scoped request is about; set by `authorize`. */
    controlPlaneProjectId: string | null
  }
}

/** The one 401 message of every control-plane endpoint taking `x-api-key`. */
export const invalidApiKeyMessage = invalidCredentialsMessage
export const invalidAdminKeyMessage = 'Invalid admin key unauthorized'

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

/** The team the request was admitted to (a team or project permission). */
export function callerTeamId(request: FastifyRequest): string {
  if (request.teamId === null) throw new UnauthorizedError(invalidApiKeyMessage)
  return request.teamId
}

/** The project the request was admitted to (a project permission). */
export function callerProjectId(request: FastifyRequest): string {
  if (request.controlPlaneProjectId === null) throw new UnauthorizedError(invalidApiKeyMessage)
  return request.controlPlaneProjectId
}

/** Who made a change, as recorded beside it (who moved a prompt label): a person, else a key. */
export type Actor = { userId: string; keyId?: undefined } | { keyId: string; userId?: undefined }

export function callerActor(request: FastifyRequest): Actor {
  const principal = request.principal
  if (principal === null) throw new UnauthorizedError(invalidApiKeyMessage)
  return principal.kind === 'user' ? { userId: principal.user.id } : { keyId: principal.key.id }
}

/**
 * Who made a change, as text stored beside it (a score's author, an erasure's requester): the
 * person's name, or `key:<id>` for a key (what every such record held before accounts).
 */
export function callerLabel(request: FastifyRequest): string {
  const principal = request.principal
  if (principal === null) throw new UnauthorizedError(invalidApiKeyMessage)
  return principal.kind === 'user' ? principal.user.name : `key:${principal.key.id}`
}
