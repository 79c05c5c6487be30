export interface FailedKeyAttemptsOptions {
  /** Failures per address within `windowMs` answered at once (a user mistyping a key). */
  freeFailures?: number
  windowMs?: number
  /** Past the free ones, one failure per address is answered every `spacingMs`. */
  spacingMs?: number
  /** A failure that would wait longer than this is refused at once (429) instead. */
  maxWaitMs?: number
  maxAddresses?: number
  now?: () => number
}

/** What to do with a failed key check: answer it after `waitMs`, or refuse it now, to be retried after `retryAfterSeconds`. */
export type FailedKeyVerdict = { waitMs: number } | { retryAfterSeconds: number }

interface AddressState {
  windowStart: number
  failures: number
  /** When the next failure past the free ones may be answered. */
  nextSlotAt: number
}

/**
 * Slows guessing of API keys without ever locking out a correct key: callers check the key first
 * and consult this only when it failed, so a valid key is admitted whatever its address has done.
 * A few failures per address are answered at once; past them, failures from the address are
 * answered one per `spacingMs` (each waits its turn), and those that would wait longer than
 * `maxWaitMs` are refused with 429 at once. A guesser gets about one answer a second per address
 * however many connections it opens, while the one it shares a proxy with is slowed only in
 * its own mistakes. In memory, per process (as Grafana's login attempt limits are per instance
 * when no database is involved).
 */
export class FailedKeyAttempts {
  readonly #free: number
  readonly #windowMs: number
  readonly #spacingMs: number
  readonly #maxWaitMs: number
  readonly #now: () => number
  readonly #maxAddresses: number
  /** In the order their windows started: the oldest are dropped first past `maxAddresses`. */
  readonly #addresses = new Map<string, AddressState>()

  constructor(options: FailedKeyAttemptsOptions = {}) {
    this.#free = options.freeFailures ?? 10
    this.#windowMs = options.windowMs ?? 15 * 60_000
    this.#spacingMs = options.spacingMs ?? 1_000
    this.#maxWaitMs = options.maxWaitMs ?? 10_000
    this.#now = options.now ?? Date.now
    this.#maxAddresses = options.maxAddresses ?? 100_000
  }

  /** Records a failed key check from `address` and says when to answer it. */
  failed(address: string): FailedKeyVerdict {
    const now = this.#now()
    let state = this.#addresses.get(address)
    if (state === undefined || now - state.windowStart >= this.#windowMs) {
      state = { windowStart: now, failures: 0, nextSlotAt: now }
      this.#addresses.delete(address)
      this.#addresses.set(address, state)
      if (this.#addresses.size > this.#maxAddresses) this.#addresses.delete(this.#addresses.keys().next().value as string)
    }
    state.failures++
    if (state.failures <= this.#free) return { waitMs: 0 }
    const slot = Math.max(now, state.nextSlotAt)
    const waitMs = slot - now
    if (waitMs > this.#maxWaitMs) return { retryAfterSeconds: Math.ceil(waitMs / 1000) }
    state.nextSlotAt = slot + this.#spacingMs
    return { waitMs }
  }
}
