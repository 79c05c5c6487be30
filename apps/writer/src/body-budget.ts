/**
 * Bounds the queued body bytes a writer holds at once. Jobs of small traces are tiny (a job of
 * twenty one-span requests is ~16 KB) and the writer stores more of them the more it holds at once
 * (they share a COPY and its commit); jobs of large requests are megabytes each. So the writer
 * takes many jobs (WRITER_CONCURRENCY) and this bounds their bodies' memory instead of their
 * number (WRITER_MAX_BODY_BYTES): a job waits here, before its bodies are read from Redis, until
 * the bytes it needs are free.
 *
 * Waiters are served in arrival order, `express` ones (a project's first turns, which the COPYs
 * also take first) ahead of the others, so a light project's trace is not held behind a flood's
 * jobs. A job larger than the whole budget goes when nothing else is held, alone.
 */
export class BodyBudget {
  readonly #limit: number
  #held = 0
  readonly #waiting: Array<{ bytes: number; express: boolean; grant(): void }> = []
  readonly #onWait: (() => void) | undefined

  /** `onWait` is told each time a job starts waiting for bytes. */
  constructor(limitBytes: number, onWait?: () => void) {
    this.#limit = limitBytes
    this.#onWait = onWait
  }

  /** Whether a job waits for bytes the jobs in hand hold. */
  get blocked(): boolean {
    return this.#waiting.length > 0
  }

  /** Bytes held now by the jobs that were granted theirs. */
  get heldBytes(): number {
    return this.#held
  }

  /** Waits until `bytes` fit, holds them, and answers the function that gives them back (once). */
  async take(bytes: number, express = false): Promise<() => void> {
    if (this.#waiting.length === 0 && this.#fits(bytes)) this.#held += bytes
    else {
      await new Promise<void>((grant) => {
        const waiter = { bytes, express, grant }
        const firstUsual = express ? this.#waiting.findIndex((other) => !other.express) : -1
        if (firstUsual === -1) this.#waiting.push(waiter)
        else this.#waiting.splice(firstUsual, 0, waiter)
        this.#onWait?.()
      })
    }
    let given = false
    return () => {
      if (given) return
      given = true
      this.#held -= bytes
      this.#grantWaiting()
    }
  }

  #fits(bytes: number): boolean {
    return this.#held === 0 || this.#held + bytes <= this.#limit
  }

  #grantWaiting(): void {
    for (let next = this.#waiting[0]; next !== undefined && this.#fits(next.bytes); next = this.#waiting[0]) {
      this.#waiting.shift()
      this.#held += next.bytes
      next.grant()
    }
  }
}
