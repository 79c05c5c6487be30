interface Pending<Item> {
  item: Item
  size: number
  resolve(): void
  reject(error: unknown): void
}

export interface GroupCommitOptions<Item> {
  /** Spans in an item: what bounds one write. */
  sizeOf(item: Item): number
  /** Bounds one write's size (and so its latency); an item is never split across writes. */
  maxSpansPerWrite: number
  write(items: Item[]): Promise<void>
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
  #inFlightSpans = 0
  #flushing: Promise<void> | null = null
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
      this.#pending.push({ item, size, resolve, reject })
      this.#pendingSpans += size
      // setImmediate, not a microtask: requests parsed in the same turn of the event loop join.
      this.#flushing ??= new Promise<void>((done) => setImmediate(done)).then(() => this.#drain())
    })
  }

  /** Resolves once everything submitted so far has been written (or rejected). */
  async flushed(): Promise<void> {
    while (this.#flushing) await this.#flushing
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
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
