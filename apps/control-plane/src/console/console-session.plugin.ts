import fastifyCookie from '@fastify/cookie'
import { findApiKeyOwnerById, isConsoleSessionRevoked, revokeConsoleSession } from '@tracewell/db'
import fp from 'fastify-plugin'
import { UserSessions } from '../accounts/user-sessions.ts'
import { ConsoleSessions } from './console-sessions.ts'
import { SessionKeys } from './session-keys.ts'
import { SessionRevocations } from './session-revocations.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Console sessions; null where SESSION_SECRET is unset and the console is not served. */
    consoleSessions: ConsoleSessions | null
    /** People's sessions (accounts/user-sessions.ts); null where SESSION_SECRET is unset. */
    userSessions: UserSessions | null
  }
}

export interface ConsoleSessionPluginOptions {
  /** SESSION_SECRET: signs the session cookies (HMAC-SHA256). */
  secret: string
  /** How long the liveness of a session's key is trusted (KEY_CACHE_TTL_MS, ≤ 5 s). */
  keyCacheTtlMs: number
  /** How long a session lasts from sign-in; 12 hours unless a test says otherwise. */
  maxAgeMs?: number
  /** People's sessions: SESSION_IDLE_HOURS and SESSION_MAX_HOURS. */
  userSessionIdleMs?: number
  userSessionMaxAgeMs?: number
}

const day = 24 * 60 * 60 * 1000

export const defaultSessionMaxAgeMs = 12 * 60 * 60 * 1000

/** Cookie parsing and signing, and `app.consoleSessions`, for the routes registered beside it. */
export const consoleSessionPlugin = fp<ConsoleSessionPluginOptions>(
  async (app, options) => {
    await app.register(fastifyCookie, { secret: options.secret, hook: 'onRequest' })
    const ttlMs = Math.min(options.keyCacheTtlMs, 5_000)
    const keys = new SessionKeys({ ttlMs, lookup: (keyId) => findApiKeyOwnerById(app.db, keyId) })
    const revocations = new SessionRevocations({
      ttlMs,
      isRevoked: (sessionId) => isConsoleSessionRevoked(app.db, sessionId),
      revoke: (sessionId, expiresAt) => revokeConsoleSession(app.db, sessionId, expiresAt),
    })
    app.decorate('consoleSessions', new ConsoleSessions({ keys, revocations, maxAgeMs: options.maxAgeMs ?? defaultSessionMaxAgeMs }))
    app.decorate('userSessions', new UserSessions({ db: app.db, idleMs: options.userSessionIdleMs ?? 7 * day, maxAgeMs: options.userSessionMaxAgeMs ?? 30 * day }))
  },
  { name: 'console-session', fastify: '5.x', dependencies: ['db'] },
)
