import type { VerifiedKey } from '@tracewell/auth'
import type { SessionUser } from './user-sessions.ts'

// Who a request is from, as every route and the audit log see it: a signed-in person, or a key
// (a project key with its scopes, a team key acting as an admin of its team). Set by the
// authorization hook before any handler runs; null on routes that need nobody (sign-in, health).

export type Principal = { kind: 'user'; user: SessionUser } | { kind: 'key'; key: VerifiedKey }

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
}
