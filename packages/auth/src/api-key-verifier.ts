import { hashApiKey, type KeyKind } from './keys.ts'

export interface VerifiedKey {
  id: string
  kind: KeyKind
  teamId: string
  projectId: string | null
}

export interface KeyRecord extends VerifiedKey {
  revoked: boolean
}

export interface ApiKeyVerifierOptions {
  /** Looks a key up by its hash (the database, in production). */
  lookup: (keyHash: string) => Promise<KeyRecord | undefined>
  /** Records that keys were used; called with batches, at most once per `touchIntervalMs`. */
  touch: (keyIds: string[], usedAt: Date) => Promise<void>
  /** How long a lookup is trusted. Bounds how late a revocation takes effect (SPEC §1: ≤ 5 s). */
  ttlMs: number
  touchIntervalMs?: number
  maxEntries?: number
  now?: () => number
}

interface CacheEntry {
  key: VerifiedKey | null
  expiresAt: number
}

// Unknown keys are remembered briefly, so a flood of bad keys cannot become a flood of queries,
// but not so long that a key created a moment ago is refused for the full TTL.
const negativeTtlMs = 1_000

/**
 * Verifies API keys without a database round trip per request: each key's lookup is cached for
 * at most `ttlMs`, concurrent misses for one key share one lookup, and use is recorded in coarse
 * batches instead of one write per request.
 */
export class ApiKeyVerifier {
  readonly #options: Required<ApiKeyVerifierOptions>
  readonly #cache = new Map<string, CacheEntry>()
  readonly #inflight = new Map<string, Promise<VerifiedKey | null>>()
  readonly #used = new Set<string>()
  readonly #touchTimer: NodeJS.Timeout

  constructor(options: ApiKeyVerifierOptions) {
    this.#options = { touchIntervalMs: 60_000, maxEntries: 50_000, now: Date.now, ...options }
    this.#touchTimer = setInterval(() => void this.flushUsage().catch(() => {}), this.#options.touchIntervalMs)
    this.#touchTimer.unref()
  }

  /** The key's identity, or null when it is unknown or revoked. */
  async verify(secret: string): Promise<VerifiedKey | null> {
    const keyHash = hashApiKey(secret)
    const cached = this.#cache.get(keyHash)
    const key = cached && cached.expiresAt > this.#options.now() ? cached.key : await this.#refresh(keyHash)
    if (key) this.#used.add(key.id)
    return key
  }

  #refresh(keyHash: string): Promise<VerifiedKey | null> {
    let pending = this.#inflight.get(keyHash)
    if (!pending) {
      pending = this.#load(keyHash).finally(() => this.#inflight.delete(keyHash))
      this.#inflight.set(keyHash, pending)
    }
    return pending
  }

  async #load(keyHash: string): Promise<VerifiedKey | null> {
    // The entry's age counts from before the read: a revocation committed while the read was in
    // flight must still take effect within the TTL.
    const readStartedAt = this.#options.now()
    const record = await this.#options.lookup(keyHash)
    const key = record && !record.revoked ? { id: record.id, kind: record.kind, teamId: record.teamId, projectId: record.projectId } : null
    if (this.#cache.size >= this.#options.maxEntries) this.#cache.delete(this.#cache.keys().next().value as string)
    this.#cache.delete(keyHash) // re-insert so Map order approximates least recently loaded
    this.#cache.set(keyHash, { key, expiresAt: readStartedAt + (key ? this.#options.ttlMs : Math.min(this.#options.ttlMs, negativeTtlMs)) })
    return key
  }

  /** Forgets a key at once in this process (e.g. right after revoking it here). */
  forget(secretHash: string): void {
    this.#cache.delete(secretHash)
  }

  async flushUsage(): Promise<void> {
    if (this.#used.size === 0) return
    const ids = [...this.#used]
    this.#used.clear()
    await this.#options.touch(ids, new Date(this.#options.now()))
  }

  async close(): Promise<void> {
    clearInterval(this.#touchTimer)
    await this.flushUsage()
  }
}
