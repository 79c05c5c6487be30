import type { SpanBatchShard } from './span-batch.shards.ts'

/** A shard that cannot take writes now, as /readyz details and the metrics name it. */
export interface UnwritableShard {
  shard: number
  /** When its last write or probe failed first (ISO 8601). */
  since: string
  reason: string
}

export interface ShardWritabilityOptions {
  shards: readonly SpanBatchShard[]
  /** Writes to the shard as a request would (and waits for its replicas); throws if it cannot. */
  probe(shard: SpanBatchShard): Promise<void>
  /** How long after a failed write or probe the shard is probed again. */
  probeIntervalMs: number
  /** A probe not answered within this long failed (a master that is gone may not answer at all). */
  probeTimeoutMs: number
}

interface Failure {
  since: Date
  reason: string
  timer: NodeJS.Timeout | null
}

/**
 * Which shards can take writes, remembered per shard: a shard whose write (or replica WAIT) failed
 * is unwritable, so that its requests are answered 503 at once instead of each waiting out its own
 * timeout, until a probe written to that shard alone succeeds. One probe per shard is in flight
 * at a time, `probeIntervalMs` after the previous one ended; the other shards are never held up.
 */
export class ShardWritability {
  readonly #options: ShardWritabilityOptions
  readonly #failures = new Map<number, Failure>()
  /** Per shard, a promise that rejects the next time the shard is marked failed (for writes in flight). */
  readonly #nextFailure = new Map<number, { promise: Promise<never>; reject(error: Error): void }>()
  #closed = false

  constructor(options: ShardWritabilityOptions) {
    this.#options = options
  }

  /** Why the shard cannot take writes now, or undefined when it can. */
  reasonOf(shard: SpanBatchShard): string | undefined {
    return this.#failures.get(shard.index)?.reason
  }

  /**
   * Rejects once the shard is next marked failed: a write in flight races it, so that its
   * requests are answered as soon as the shard is known to be gone, not when their own command
   * times out.
   */
  nextFailure(shard: SpanBatchShard): Promise<never> {
    let next = this.#nextFailure.get(shard.index)
    if (!next) {
      let reject!: (error: Error) => void
      const promise = new Promise<never>((_, fail) => (reject = fail))
      promise.catch(() => {}) // nobody may be waiting when it fires
      next = { promise, reject }
      this.#nextFailure.set(shard.index, next)
    }
    return next.promise
  }

  /** Records that a write to the shard failed and starts probing it. */
  failed(shard: SpanBatchShard, reason: string): void {
    const next = this.#nextFailure.get(shard.index)
    if (next) {
      this.#nextFailure.delete(shard.index)
      next.reject(new Error(reason))
    }
    const failure = this.#failures.get(shard.index)
    if (failure) {
      failure.reason = reason
      return
    }
    this.#failures.set(shard.index, { since: new Date(), reason, timer: null })
    this.#scheduleProbe(shard)
  }

  /** Records that a write to the shard (and its replica WAIT) succeeded. */
  succeeded(shard: SpanBatchShard): void {
    const failure = this.#failures.get(shard.index)
    if (!failure) return
    if (failure.timer) clearTimeout(failure.timer)
    this.#failures.delete(shard.index)
  }

  /** Probes every shard that is not already being probed (for /readyz); never throws. */
  async probeWritable(): Promise<void> {
    await Promise.all(this.#options.shards.filter((shard) => !this.#failures.has(shard.index)).map((shard) => this.#probe(shard)))
  }

  unwritable(): UnwritableShard[] {
    return [...this.#failures].sort(([a], [b]) => a - b).map(([shard, failure]) => ({ shard, since: failure.since.toISOString(), reason: failure.reason }))
  }

  get count(): number {
    return this.#options.shards.length
  }

  close(): void {
    this.#closed = true
    for (const failure of this.#failures.values()) if (failure.timer) clearTimeout(failure.timer)
  }

  async #probe(shard: SpanBatchShard): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`shard ${shard.index}: no answer within ${this.#options.probeTimeoutMs} ms`)), this.#options.probeTimeoutMs)
    })
    try {
      await Promise.race([this.#options.probe(shard), deadline])
      this.succeeded(shard)
    } catch (error) {
      this.failed(shard, error instanceof Error ? error.message : String(error))
    } finally {
      clearTimeout(timer)
    }
  }

  #scheduleProbe(shard: SpanBatchShard): void {
    const failure = this.#failures.get(shard.index)
    if (!failure || this.#closed) return
    failure.timer = setTimeout(() => {
      failure.timer = null
      void this.#probe(shard).then(() => {
        // Still failing (and not replaced by a newer failure record): probe again later.
        if (this.#failures.get(shard.index) === failure && failure.timer === null) this.#scheduleProbe(shard)
      })
    }, this.#options.probeIntervalMs)
    failure.timer.unref()
  }
}
