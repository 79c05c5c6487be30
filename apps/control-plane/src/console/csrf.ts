import { ForbiddenError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'

/**
 * The header every console request that changes data must carry. A cross-site form or image can
 * send the cookie's requests but not a custom header, and a cross-site script that tries must
 * pass a CORS preflight, which this server never grants. SameSite=Strict already keeps the cookie
 * off cross-site requests; the header is the second, independent guard (OWASP's "custom request
 * header" defence), and needs no token to keep in sync.
 */
export const csrfHeader = 'x-tracewell-csrf'

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

export const csrfMessage = `Missing header ${csrfHeader}: 1; requests that change data with the console's session cookie must send it`

/** An error when `request` changes data without the header; undefined when it may go on. */
export function csrfFailure(request: FastifyRequest): Error | undefined {
  if (safeMethods.has(request.method)) return undefined
  if (request.headers[csrfHeader] === '1') return undefined
  return new ForbiddenError(csrfMessage)
}

/** The check as an onRequest hook, for routes the authorize hook does not judge: sign-in and sign-out, and routes no session admits that sign in or change an account (an invitation's acceptance, a password reset). */
export async function requireCsrfHeader(request: FastifyRequest): Promise<void> {
  const failure = csrfFailure(request)
  if (failure) throw failure
}
