import type { FastifyRequest } from 'fastify'

/**
 * HttpOnly: no script can read it. SameSite: Strict keeps the team-key session off every
 * cross-site request; people's sessions are Lax (the choice, so that following a link to
 * Tracewell from mail or chat arrives signed in), and every request that changes data also needs
 * the CSRF header (csrf.ts). Secure when the request came over HTTPS, directly or through a proxy
 * that says so: the browser would drop a Secure cookie set over plain HTTP (http://localhost:3000).
 */
export function cookieAttributes(request: FastifyRequest, sameSite: 'strict' | 'lax') {
  return { path: '/', httpOnly: true, sameSite, secure: cameOverHttps(request) }
}

function cameOverHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true
  const forwarded = request.headers['x-forwarded-proto']
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase()
  return first === 'https'
}
