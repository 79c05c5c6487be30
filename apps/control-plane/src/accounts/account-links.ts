import type { FastifyRequest } from 'fastify'

// Where the links of invitations, password resets and the setup link point: the console's pages
// (apps/console: /invitations/:token, /reset-password/:token, /setup/:token) on PUBLIC_URL.

/** A console path on `base` (PUBLIC_URL, or the origin the request came to). */
export function consolePageUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`
}

/**
 * PUBLIC_URL, else the origin the signed-in admin's request came to (their browser reached the
 * console there). Never used for a link that an anonymous request has mailed: its Host header is
 * the requester's to choose (password reset needs PUBLIC_URL).
 */
export function linkBase(publicUrl: string | undefined, request: FastifyRequest): string {
  return publicUrl ?? `${request.protocol}://${request.host}`
}
