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
  /** How long a lookup is trusted. Bounds how late a revocation takes effect (≤ 5 s, docs/api.md#credentials). */
  ttlMs: number
  touchIntervalMs?: number
  maxEntries?: number
  now?: () => number
}

interface CacheEntry {
  readonly keyHash: string
  readonly key: VerifiedKey | null
  readonly expiresAt: number
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
  /** Every lookup (valid, revoked or unknown) by the key's hash. */
  readonly #byHash = new Map<string, CacheEntry>()
  /**
   * Valid keys by the text presented, sharing their entry (and so its expiry) with `#byHash`: a
   * repeat request costs a map lookup instead of a SHA-256, which was ~3% of a cached GET
   * /api/promptset. Only keys that verified are here, so a flood of made-up keys cannot grow it.
   */
  readonly #bySecret = new Map<string, CacheEntry>()
  readonly #inflight = new Map<string, Promise<CacheEntry>>()
  readonly #used = new Set<string>()
  readonly #touchTimer: NodeJS.Timeout

  constructor(options: ApiKeyVerifierOptions) {
    this.#options = { touchIntervalMs: 60_000, maxEntries: 50_000, now: Date.now, ...options }
    this.#touchTimer = setInterval(() => {
      this.#dropExpiredSecrets()
      void this.flushUsage().catch(() => {})
    }, this.#options.touchIntervalMs)
    this.#touchTimer.unref()
  }

  /**
   * The identity of a key verified a moment ago (within the TTL), recognised by its text; undefined
   * when `verify` has to decide. Synchronous, so a hook can finish without a promise on the hot path.
   */
  verifyCached(secret: string): VerifiedKey | undefined {
    const known = this.#bySecret.get(secret)
    if (known === undefined || known.key === null || known.expiresAt <= this.#options.now()) return undefined
    this.#used.add(known.key.id)
    return known.key
  }

  /** The key's identity, or null when it is unknown or revoked. */
  async verify(secret: string): Promise<VerifiedKey | null> {
    const recognised = this.verifyCached(secret)
    if (recognised !== undefined) return recognised
    const keyHash = hashApiKey(secret)
    const cached = this.#byHash.get(keyHash)
    const entry = cached !== undefined && cached.expiresAt > this.#options.now() ? cached : await this.#refresh(keyHash)
    if (entry.key === null) {
      this.#bySecret.delete(secret)
      return null
    }
    this.#remember(this.#bySecret, secret, entry)
    this.#used.add(entry.key.id)
    return entry.key
  }

  #refresh(keyHash: string): Promise<CacheEntry> {
    let pending = this.#inflight.get(keyHash)
    if (!pending) {
      pending = this.#load(keyHash).finally(() => this.#inflight.delete(keyHash))
      this.#inflight.set(keyHash, pending)
    }
    return pending
  }

  async #load(keyHash: string): Promise<CacheEntry> {
    // The entry's age counts from before the read: a revocation committed while the read was in
    // flight must still take effect within the TTL.
    const readStartedAt = this.#options.now()
    const record = await this.#options.lookup(keyHash)
    const key = record && !record.revoked ? { id: record.id, kind: record.kind, teamId: record.teamId, projectId: record.projectId } : null
    const entry = { keyHash, key, expiresAt: readStartedAt + (key ? this.#options.ttlMs : Math.min(this.#options.ttlMs, negativeTtlMs)) }
    this.#remember(this.#byHash, keyHash, entry)
    return entry
  }

  /** Stores an entry, dropping the least recently stored one when the map is full. */
  #remember(map: Map<string, CacheEntry>, mapKey: string, entry: CacheEntry): void {
    if (map.size >= this.#options.maxEntries && !map.has(mapKey)) map.delete(map.keys().next().value as string)
    map.delete(mapKey) // re-insert so Map order approximates least recently stored
    map.set(mapKey, entry)
  }

  /** Secrets are not kept in memory longer than they are useful. */
  #dropExpiredSecrets(): void {
    const now = this.#options.now()
    for (const [secret, entry] of this.#bySecret) if (entry.expiresAt <= now) this.#bySecret.delete(secret)
  }

  /** Forgets a key at once in this process (e.g. right after revoking it here). */
  forget(secretHash: string): void {
    this.#byHash.delete(secretHash)
    // Revocations are rare: scanning the recently used valid keys costs less than keeping a second
    // index up to date on the hot path.
    for (const [secret, entry] of this.#bySecret) if (entry.keyHash === secretHash) this.#bySecret.delete(secret)
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
