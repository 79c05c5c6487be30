import { newSecretToken, secretTokenHash } from '@tracewell/auth'
import { createUserSession, endUserSession, findLiveUserSession, findUserById, touchUserSession, type Db, type UserDto } from '@tracewell/db'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { cookieAttributes } from '../console/cookie-attributes.ts'

// People's sessions (docs/accounts.md#sessions): the cookie holds a random token, the database its
// SHA-256 and the limits. Every request looks the session up (a primary-key read), so a sign-out,
// a password change or a removal from the team ends it on every replica at once.

export const userSessionCookieName = 'tw_sid'

/** A signed-in person, as every route sees them. */
export interface SessionUser extends UserDto {
  sessionId: string
  sessionExpiresAt: Date
}

export interface UserSessionsOptions {
  db: Db
  /** A session ends after this long without a request. */
  idleMs: number
  /** A session ends this long after sign-in. */
  maxAgeMs: number
}

/** Activity is written at most this often per session: a request does not cost a write. */
const touchEveryMs = 60_000

export class UserSessions {
  readonly #db: Db
  readonly idleMs: number
  readonly maxAgeMs: number

  constructor(options: UserSessionsOptions) {
    this.#db = options.db
    this.idleMs = options.idleMs
    this.maxAgeMs = options.maxAgeMs
  }

  /** Whether the request carries a session cookie at all (valid or not). */
  presented(request: FastifyRequest): boolean {
    return typeof request.cookies[userSessionCookieName] === 'string'
  }

  /** The person the request's cookie stands for; null without a live session. */
  async userOf(request: FastifyRequest): Promise<SessionUser | null> {
    const token = request.cookies[userSessionCookieName]
    if (token === undefined || token === '') return null
    const session = await findLiveUserSession(this.#db, secretTokenHash(token), this.idleMs)
    if (session === undefined) return null
    const user = await findUserById(this.#db, session.userId)
    if (user === undefined) return null
    if (Date.now() - session.lastSeenAt.getTime() > touchEveryMs) await touchUserSession(this.#db, session.id)
    return { ...user, sessionId: session.id, sessionExpiresAt: session.expiresAt }
  }

  /**
   * Signs `userId` in: a new session (a new id at every sign-in, so a session id planted before
   * sign-in is worthless) and its cookie. The caller has checked who they are.
   */
  async start(request: FastifyRequest, reply: FastifyReply, userId: string): Promise<{ sessionId: string; expiresAt: Date }> {
    const { token, tokenHash } = newSecretToken()
    const userAgent = request.headers['user-agent']
    const session = await createUserSession(this.#db, {
      tokenHash,
      userId,
      expiresAt: new Date(Date.now() + this.maxAgeMs),
      ip: request.ip,
      userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
    })
    void reply.setCookie(userSessionCookieName, token, { ...cookieAttributes(request, 'lax'), maxAge: Math.floor(this.maxAgeMs / 1000) })
    return { sessionId: session.id, expiresAt: session.expiresAt }
  }

  /** Signs the request's session out on the server, then tells the browser to drop the cookie. */
  async end(request: FastifyRequest, reply: FastifyReply, user: SessionUser | null): Promise<void> {
    if (user !== null) await endUserSession(this.#db, user.id, user.sessionId)
    void reply.clearCookie(userSessionCookieName, cookieAttributes(request, 'lax'))
  }
}
