import type { KeyScope } from '@tracewell/policy'
import { hashApiKey, type KeyKind } from './keys.ts'

export interface VerifiedKey {
  id: string
  kind: KeyKind
  teamId: string
  projectId: string | null
  /** What a project key may (@tracewell/policy's keyAllows); null: made before scopes, every right it had. */
  scopes: readonly KeyScope[] | null
  /** The person who made the key; null for keys made by a key, the bootstrap or before accounts. */
  createdByUserId: string | null
  /** When the key stops working, in ms since the epoch; null: never. */
  expiresAt: number | null
}

export interface KeyRecord extends VerifiedKey {
  revoked: boolean
}

export interface ApiKeyVerifierOptions {
  /** Looks keys up by their hashes (the database, in production); keys not found are absent. */
  lookupMany: (keyHashes: string[]) => Promise<Map<string, KeyRecord>>
  /** Records that keys were used; called with batches, at most once per `touchIntervalMs`. */
  touch: (keyIds: string[], usedAt: Date) => Promise<void>
  /** How long a lookup is trusted. Bounds how late a revocation takes effect (≤ 5 s, docs/api.md#credentials). */
  ttlMs: number
  /**
   * How long a key verified before the key store became unreachable keeps working while it stays
   * unreachable, counted from the key's last successful check (KEY_OUTAGE_GRACE_MS). Unknown keys
   * still fail; whenever the store answers, the TTL alone decides.
   */
  outageGraceMs?: number
  touchIntervalMs?: number
  maxEntries?: number
  now?: () => number
}

interface CacheEntry {
  readonly keyHash: string
  readonly key: VerifiedKey | null
  /** When the lookup that made this entry started: the key was valid then. */
  readonly checkedAt: number
  readonly expiresAt: number
}

// Unknown keys are remembered briefly, so retries of one bad key cannot become a flood of
// queries, but not so long that a key created a moment ago is refused for the full TTL. (A flood
// of different made-up keys is bounded by batching instead: see #lookup.)
const negativeTtlMs = 1_000

// After a failed lookup the store is not asked again for this long: during an outage, requests
// get their stale key or their 503 at once instead of each waiting for a connection to fail.
const storeRetryMs = 1_000

// Most hashes in one lookup query.
const maxHashesPerLookup = 500

/** The key store could not be asked (the database is unreachable, say), and no earlier answer stands in. */
export class KeyStoreUnavailableError extends Error {
  override name = 'KeyStoreUnavailableError'
}

interface PendingLookup {
  resolve(record: KeyRecord | undefined): void
  reject(error: unknown): void
}

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
   * repeat request costs a map lookup instead of a SHA-256, a visible share of a cached GET
   * /api/promptset (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). Only keys that verified are here, so a flood of made-up keys cannot grow it.
   */
  readonly #bySecret = new Map<string, CacheEntry>()
  readonly #inflight = new Map<string, Promise<CacheEntry>>()
  /** Hashes waiting for the next lookup query; at most one query is in flight at a time. */
  readonly #waiting = new Map<string, PendingLookup[]>()
  #querying = false
  #storeDownUntil = 0
  #storeError: unknown = null
  readonly #used = new Set<string>()
  readonly #touchTimer: NodeJS.Timeout

  constructor(options: ApiKeyVerifierOptions) {
    this.#options = { touchIntervalMs: 60_000, maxEntries: 50_000, outageGraceMs: 15 * 60_000, now: Date.now, ...options }
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
    // An entry never outlives its key's expiry (#load), so an expired key is looked up again and refused.
    if (known === undefined || known.key === null || known.expiresAt <= this.#options.now()) return undefined
    this.#used.add(known.key.id)
    return known.key
  }

  /**
   * The key's identity, or null when it is unknown or revoked. Rejects with
   * KeyStoreUnavailableError when the key must be looked up and the store cannot be reached,
   * unless the key was verified within the outage grace.
   */
  async verify(secret: string): Promise<VerifiedKey | null> {
    const recognised = this.verifyCached(secret)
    if (recognised !== undefined) return recognised
    const keyHash = hashApiKey(secret)
    const cached = this.#byHash.get(keyHash)
    const entry = cached !== undefined && cached.expiresAt > this.#options.now() ? cached : await this.#refreshOrStale(keyHash, cached)
    if (entry.key === null) {
      this.#bySecret.delete(secret)
      return null
    }
    this.#remember(this.#bySecret, secret, entry)
    this.#used.add(entry.key.id)
    return entry.key
  }

  /** A fresh lookup; if the store cannot be reached, the last valid answer within the grace. */
  async #refreshOrStale(keyHash: string, cached: CacheEntry | undefined): Promise<CacheEntry> {
    try {
      return await this.#refresh(keyHash)
    } catch (error) {
      const now = this.#options.now()
      const withinGrace = cached?.key != null && now - cached.checkedAt <= this.#options.outageGraceMs && !expiredAt(cached.key, now)
      if (withinGrace) return cached
      throw new KeyStoreUnavailableError(`API keys cannot be checked: ${(error as Error).message}`, { cause: error })
    }
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
    const record = await this.#lookup(keyHash)
    const key: VerifiedKey | null =
      record && !record.revoked && !expiredAt(record, readStartedAt)
        ? { id: record.id, kind: record.kind, teamId: record.teamId, projectId: record.projectId, scopes: record.scopes, createdByUserId: record.createdByUserId, expiresAt: record.expiresAt }
        : null
    // A key that expires before the TTL is over is trusted only until it expires.
    const trustedUntil = key ? Math.min(readStartedAt + this.#options.ttlMs, key.expiresAt ?? Infinity) : readStartedAt + Math.min(this.#options.ttlMs, negativeTtlMs)
    const entry = { keyHash, key, checkedAt: readStartedAt, expiresAt: trustedUntil }
    this.#remember(this.#byHash, keyHash, entry)
    return entry
  }

  /**
   * One key's record, looked up together with every other key that missed meanwhile: one query
   * at a time, for all of them. However many different keys arrive (a flood of made-up ones, say),
   * the store sees one query per round trip, not one per key.
   */
  #lookup(keyHash: string): Promise<KeyRecord | undefined> {
    if (this.#options.now() < this.#storeDownUntil) return Promise.reject(this.#storeError)
    return new Promise((resolve, reject) => {
      const waiters = this.#waiting.get(keyHash)
      if (waiters) waiters.push({ resolve, reject })
      else this.#waiting.set(keyHash, [{ resolve, reject }])
      if (!this.#querying) {
        this.#querying = true
        setImmediate(() => void this.#queryWaiting())
      }
    })
  }

  async #queryWaiting(): Promise<void> {
    while (this.#waiting.size > 0) {
      const batch = [...this.#waiting.entries()].slice(0, maxHashesPerLookup)
      for (const [hash] of batch) this.#waiting.delete(hash)
      try {
        const records = await this.#options.lookupMany(batch.map(([hash]) => hash))
        for (const [hash, waiters] of batch) for (const waiter of waiters) waiter.resolve(records.get(hash))
      } catch (error) {
        this.#storeError = error
        this.#storeDownUntil = this.#options.now() + storeRetryMs
        for (const [, waiters] of batch) for (const waiter of waiters) waiter.reject(error)
      }
    }
    this.#querying = false
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

function expiredAt(key: Pick<VerifiedKey, 'expiresAt'>, now: number): boolean {
  return key.expiresAt !== null && key.expiresAt <= now
}
