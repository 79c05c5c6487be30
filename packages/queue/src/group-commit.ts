interface Pending<Item> {
  item: Item
  size: number
  /** performance.now() when it was submitted. */
  at: number
  resolve(): void
  reject(error: unknown): void
}

export interface GroupCommitOptions<Item> {
  /** Spans in an item: what bounds one write. */
  sizeOf(item: Item): number
  /** Bounds one write's size (and so its latency); an item is never split across writes. */
  maxSpansPerWrite: number
  write(items: Item[]): Promise<void>
  /**
   * How long a write may wait, counted from its oldest request's arrival, for more requests to
   * join it (ms; default 0: it holds only what arrived during the previous write). Every write
   * is a job, with its round trips in ingest, Redis and the writer: a few milliseconds make
   * one-span requests jobs of tens of spans instead of a few (docs/benchmarks.md).
   */
  lingerMs?: number
  /** A write that holds this many spans goes at once, lingering no longer (default maxSpansPerWrite). */
  lingerUntilSpans?: number
  /**
   * The linger also ends once no request has arrived for this long (ms; default: it runs its
   * lingerMs). Requests that come in a burst (clients answered together send again together) are
   * all in by then, and waiting out the rest of lingerMs would only delay their answers: in a
   * closed loop of 50 clients a fixed 5 ms capped ingest at ~5–6k one-span requests a second.
   * A steady stream has no such gap, so its writes still linger and grow.
   */
  lingerQuietMs?: number
}

/**
 * Group commit: requests that arrive while a write is in flight (or in the same tick) are written
 * together in the next write, so many small requests cost one round trip instead of one each.
 * Every caller's promise settles with the write that carried its item: resolved once it is
 * acknowledged, rejected (all of them) if it fails.
 */
export class GroupCommit<Item> {
  #pending: Array<Pending<Item>> = []
  #pendingSpans = 0
  /** performance.now() when the latest request was submitted. */
  #lastArrival = 0
  #inFlightSpans = 0
  #flushing: Promise<void> | null = null
  /** Ends the linger early: set while the drain lingers, called once enough spans are pending. */
  #filled: (() => void) | null = null
  readonly #options: GroupCommitOptions<Item>

  constructor(options: GroupCommitOptions<Item>) {
    this.#options = options
  }

  /** Spans accepted but not yet acknowledged by the store (waiting plus in the current write). */
  get unacknowledgedSpans(): number {
    return this.#pendingSpans + this.#inFlightSpans
  }

  submit(item: Item): Promise<void> {
    const size = this.#options.sizeOf(item)
    if (size === 0) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const at = performance.now()
      this.#lastArrival = at
      this.#pending.push({ item, size, at, resolve, reject })
      this.#pendingSpans += size
      if (this.#filled !== null && this.#pendingSpans >= this.#lingerUntilSpans) this.#filled()
      // setImmediate, not a microtask: requests parsed in the same turn of the event loop join.
      this.#flushing ??= new Promise<void>((done) => setImmediate(done)).then(() => this.#drain())
    })
  }

  /** Resolves once everything submitted so far has been written (or rejected). */
  async flushed(): Promise<void> {
    while (this.#flushing) await this.#flushing
  }

  get #lingerUntilSpans(): number {
    return this.#options.lingerUntilSpans ?? this.#options.maxSpansPerWrite
  }

  /**
   * Waits until the oldest pending request has waited lingerMs, lingerUntilSpans spans are
   * pending, or no request has arrived for lingerQuietMs.
   */
  #linger(): Promise<void> | undefined {
    const oldest = this.#pending[0]
    if (oldest === undefined || this.#pendingSpans >= this.#lingerUntilSpans) return undefined
    const until = oldest.at + (this.#options.lingerMs ?? 0)
    const quietMs = this.#options.lingerQuietMs ?? Number.POSITIVE_INFINITY
    const end = () => Math.min(until, this.#lastArrival + quietMs)
    const left = end() - performance.now()
    if (left <= 0) return undefined
    return new Promise<void>((resolve) => {
      // Woken at the earlier of the two ends; a request that arrived meanwhile moves the quiet one.
      const wake = () => {
        const left = end() - performance.now()
        if (left <= 0) this.#filled?.()
        else timer = setTimeout(wake, left)
      }
      let timer = setTimeout(wake, left)
      this.#filled = () => {
        this.#filled = null
        clearTimeout(timer)
        resolve()
      }
    })
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        await this.#linger()
        let take = 0
        let spans = 0
        while (take < this.#pending.length) {
          const next = this.#pending[take] as Pending<Item>
          if (take > 0 && spans + next.size > this.#options.maxSpansPerWrite) break
          spans += next.size
          take++
        }
        const batch = this.#pending.splice(0, take)
        this.#inFlightSpans = spans
        this.#pendingSpans -= spans
        try {
          await this.#options.write(batch.map((pending) => pending.item))
          for (const pending of batch) pending.resolve()
        } catch (error) {
          for (const pending of batch) pending.reject(error)
        } finally {
          this.#inFlightSpans = 0
        }
      }
    } finally {
      this.#flushing = null
    }
  }
}

/**
 * Splits consecutive items into groups of at most `maxSpans` spans each, keeping every item whole:
 * an item larger than `maxSpans` makes a group of its own.
 */
export function groupBySpans<Item>(items: readonly Item[], sizeOf: (item: Item) => number, maxSpans: number): Item[][] {
  const groups: Item[][] = []
  let current: Item[] = []
  let spans = 0
  for (const item of items) {
    const size = sizeOf(item)
    if (current.length > 0 && spans + size > maxSpans) {
      groups.push(current)
      current = []
      spans = 0
    }
    current.push(item)
    spans += size
  }
  if (current.length > 0) groups.push(current)
  return groups
}
