import { LRUCache } from 'lru-cache'

export interface SessionRevocationsOptions {
  /** Whether the session was signed out (the database, in production). */
  isRevoked: (sessionId: string) => Promise<boolean>
  /** Records a sign-out until the session's expiry. */
  revoke: (sessionId: string, expiresAt: Date) => Promise<void>
  /**
   * How long an answer is trusted (KEY_CACHE_TTL_MS): a session signed out on another replica
   * stops working here within this bound, as a revoked key does; on this replica at once.
   */
  ttlMs: number
  maxEntries?: number
}

/**
 * Sign-outs of console sessions, so that a signed-out cookie is refused by the server and not
 * only forgotten by the browser (a copy of it would otherwise work until it expires). Answers are
 * cached as key checks are, so a console request costs no extra round trip.
 */
export class SessionRevocations {
  readonly #options: SessionRevocationsOptions
  readonly #cache: LRUCache<string, { revoked: boolean }> | null

  constructor(options: SessionRevocationsOptions) {
    this.#options = options
    this.#cache =
      options.ttlMs > 0
        ? new LRUCache<string, { revoked: boolean }>({
            max: options.maxEntries ?? 10_000,
            ttl: options.ttlMs,
            fetchMethod: async (sessionId) => ({ revoked: await options.isRevoked(sessionId) }),
          })
        : null
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    if (this.#cache === null) return this.#options.isRevoked(sessionId)
    return (await this.#cache.fetch(sessionId))?.revoked ?? false
  }

  async revoke(sessionId: string, expiresAt: Date): Promise<void> {
    await this.#options.revoke(sessionId, expiresAt)
    this.#cache?.set(sessionId, { revoked: true })
  }
}
