import { ForbiddenError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import type { SessionUser } from '../accounts/user-sessions.ts'

/** The person behind a request that only people make (a comment's author, a queue item's holder). */
export function signedInPerson(request: FastifyRequest, what: string): SessionUser {
  if (request.principal?.kind !== 'user') throw new ForbiddenError(`${what} is for signed-in people; keys may not`)
  return request.principal.user
}
