import type { ApiKeyOwner } from '@tracewell/db'
import { LRUCache } from 'lru-cache'

export interface SessionKeysOptions {
  /** The key with this id and its team's name (the database, in production). */
  lookup: (keyId: string) => Promise<ApiKeyOwner | undefined>
  /**
   * How long an answer is trusted (KEY_CACHE_TTL_MS): a session whose key is revoked elsewhere
   * stops working within this bound, as API keys do. 0 looks the key up on every request.
   */
  ttlMs: number
  maxEntries?: number
}

interface Lookup {
  owner: ApiKeyOwner | null
}

/**
 * Whether the key a session stands on is still live, without a database round trip per console
 * request: answers are cached for at most `ttlMs`, and concurrent checks of one key share one lookup.
 */
export class SessionKeys {
  readonly #lookup: SessionKeysOptions['lookup']
  // lru-cache reads a ttl of 0 as "never expires", so a zero TTL means no cache at all.
  readonly #cache: LRUCache<string, Lookup> | null

  constructor(options: SessionKeysOptions) {
    this.#lookup = options.lookup
    this.#cache =
      options.ttlMs > 0
        ? new LRUCache<string, Lookup>({
            max: options.maxEntries ?? 10_000,
            ttl: options.ttlMs,
            fetchMethod: async (keyId, _stale, { options: fetchOptions }) => {
              const startedAt = performance.now()
              const owner = (await this.#lookup(keyId)) ?? null
              // The age of an answer counts from before its read, so a revocation committed while
              // the read was in flight still takes effect within the TTL.
              fetchOptions.ttl = Math.max(1, options.ttlMs - (performance.now() - startedAt))
              return { owner }
            },
          })
        : null
  }

  /** The key and its team, or null when there is no such key; revoked keys come back with `revoked`. */
  async owner(keyId: string): Promise<ApiKeyOwner | null> {
    if (this.#cache === null) return (await this.#lookup(keyId)) ?? null
    const found = await this.#cache.fetch(keyId)
    return found?.owner ?? null
  }

  /** Drops a key's answer at once in this process (right after revoking it here). */
  forget(keyId: string): void {
    this.#cache?.delete(keyId)
  }
}
