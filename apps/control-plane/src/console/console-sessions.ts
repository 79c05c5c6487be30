import { randomBytes } from 'node:crypto'
import type { VerifiedKey } from '@tracewell/auth'
import type { ApiKeyOwner } from '@tracewell/db'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { decodeSessionClaims, encodeSessionClaims } from './session-claims.ts'
import type { SessionKeys } from './session-keys.ts'
import type { SessionRevocations } from './session-revocations.ts'
import { cookieAttributes } from './cookie-attributes.ts'

export const sessionCookieName = 'tw_session'

/** A signed-in console user: the team key they signed in with stands behind every request. */
export interface SessionCaller extends VerifiedKey {
  kind: 'team'
  teamName: string
  /** When the session ends, in milliseconds since the Unix epoch (`expiresAt` is the key's). */
  sessionExpiresAt: number
}

export interface ConsoleSessionsOptions {
  keys: SessionKeys
  /** Sessions signed out before they expired. */
  revocations: SessionRevocations
  /** How long a session lasts from sign-in, in ms. */
  maxAgeMs: number
  now?: () => number
}

/**
 * Console sessions as signed cookies: a session survives a restart and works on every replica
 * that has the same SESSION_SECRET. Each request checks the signature, the expiry and (cached)
 * that the team key named in the cookie is still live and the session was not signed out; only
 * sign-outs are stored on the server, until the session would have expired, as Grafana and
 * Sentry end a session on the server when its user signs out. Needs @fastify/cookie registered
 * with the secret.
 */
export class ConsoleSessions {
  readonly #keys: SessionKeys
  readonly #revocations: SessionRevocations
  readonly #maxAgeMs: number
  readonly #now: () => number

  constructor(options: ConsoleSessionsOptions) {
    this.#keys = options.keys
    this.#revocations = options.revocations
    this.#maxAgeMs = options.maxAgeMs
    this.#now = options.now ?? Date.now
  }

  /** Whether the request carries a session cookie at all (valid or not). */
  presented(request: FastifyRequest): boolean {
    return typeof request.cookies[sessionCookieName] === 'string'
  }

  /**
   * The caller the request's session cookie stands for; null when there is none, its signature or
   * content is wrong, it has expired, or its key was revoked or belongs elsewhere now.
   */
  async callerOf(request: FastifyRequest): Promise<SessionCaller | null> {
    const claims = this.#claimsOf(request)
    if (claims === null || claims.expiresAt <= this.#now()) return null
    const [owner, revoked] = await Promise.all([this.#keys.owner(claims.keyId), this.#revocations.isRevoked(claims.sessionId)])
    if (revoked || owner === null || !live(owner, this.#now()) || owner.teamId !== claims.teamId) return null
    return callerOf(owner, claims.expiresAt)
  }

  /** Signs `key` in: sets the cookie and returns the session; null if the key is not a live team key. */
  async start(request: FastifyRequest, reply: FastifyReply, key: VerifiedKey): Promise<SessionCaller | null> {
    const owner = await this.#keys.owner(key.id)
    if (owner === null || !live(owner, this.#now())) return null
    const expiresAt = this.#now() + this.#maxAgeMs
    void reply.setCookie(sessionCookieName, encodeSessionClaims({ sessionId: randomBytes(18).toString('base64url'), teamId: owner.teamId, keyId: owner.id, expiresAt }), {
      ...cookieAttributes(request, 'strict'),
      maxAge: Math.floor(this.#maxAgeMs / 1000),
      signed: true,
    })
    return callerOf(owner, expiresAt)
  }

  /**
   * Signs out: the session is revoked on the server (every replica refuses it from then on, other
   * replicas within the key cache TTL), then the browser is told to drop the cookie.
   */
  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const claims = this.#claimsOf(request)
    if (claims !== null && claims.expiresAt > this.#now()) await this.#revocations.revoke(claims.sessionId, new Date(claims.expiresAt))
    void reply.clearCookie(sessionCookieName, cookieAttributes(request, 'strict'))
  }

  /** The claims of the request's cookie when it is there and signed by us; null otherwise. */
  #claimsOf(request: FastifyRequest) {
    const raw = request.cookies[sessionCookieName]
    if (raw === undefined) return null
    const unsigned = request.unsignCookie(raw)
    if (!unsigned.valid || unsigned.value === null) return null
    return decodeSessionClaims(unsigned.value)
  }

  /** Forgets a revoked key at once in this process; other replicas follow within the key cache TTL. */
  forgetKey(keyId: string): void {
    this.#keys.forget(keyId)
  }
}

/** A team key that signs a session in: not revoked, not expired (an expired key ends its sessions). */
function live(owner: ApiKeyOwner, now: number): boolean {
  return !owner.revoked && owner.kind === 'team' && (owner.expiresAt === null || owner.expiresAt > now)
}

function callerOf(owner: ApiKeyOwner, sessionExpiresAt: number): SessionCaller {
  const { revoked: _revoked, teamName, ...key } = owner
  return { ...key, kind: 'team', projectId: null, teamName, sessionExpiresAt }
}
