import { createHash, randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { cookieAttributes } from '../../console/cookie-attributes.ts'

// Binds an OIDC sign-in to the browser that started it (docs/accounts.md#single-sign-on): the
// browser gets a random token in a cookie, the attempt keeps its SHA-256, and the callback must
// bring both. Without it, anyone could start a sign-in to their own account and have a victim's
// browser finish it (login CSRF). Lax, so that it comes back on the provider's top-level redirect.

const cookieName = 'tw_sso'
const path = '/api/auth/oidc'

export const browserHashOf = (token: string) => createHash('sha256').update(token).digest('hex')

/** Gives the browser a new token for `maxAgeMs`; returns its hash for the attempt. */
export function bindAttemptToBrowser(request: FastifyRequest, reply: FastifyReply, maxAgeMs: number): string {
  const token = randomBytes(32).toString('base64url')
  void reply.setCookie(cookieName, token, { ...cookieAttributes(request, 'lax'), path, maxAge: Math.floor(maxAgeMs / 1000) })
  return browserHashOf(token)
}

/** The hash of the token this browser brought back (and the cookie dropped); undefined without one. */
export function takeBrowserHash(request: FastifyRequest, reply: FastifyReply): string | undefined {
  const token = request.cookies[cookieName]
  void reply.clearCookie(cookieName, { ...cookieAttributes(request, 'lax'), path })
  return token === undefined || token === '' ? undefined : browserHashOf(token)
}
