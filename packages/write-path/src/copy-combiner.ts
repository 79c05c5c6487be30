import type { Db } from '@tracewell/db'
import { copySpans, type EndBefore } from './span-store.ts'
import type { ProjectSpanSource } from './span-statement.ts'
import type { CombinedCopyOutcome, CopyLane, SharedCopy } from './shared-copy.ts'

export type { CombinedCopyOutcome, CopyLane } from './shared-copy.ts'

// Jobs that are ready together are stored in one COPY, in one transaction: small traces come as
// small jobs (one-span requests, grouped by ingest into jobs of tens of spans), and one
// transaction each cost a commit (a WAL flush) and a summary delta each, which made the writer
// wait on Postgres far more than it worked (docs/benchmarks.md). The same group commit ingest
// does for Redis: while `maxInFlight` COPYs run, jobs that become ready wait and go together in
// the next.

export interface CopyCombinerOptions {
  /** Spans in one combined COPY, at most (a larger job goes alone). */
  maxSpans: number
  /** Combined COPYs running at once: two let one be encoded while Postgres applies the other. */
  maxInFlight: number
  /**
   * A COPY open this long (ms) takes no further job: the jobs of its group not yet begun wait for
   * the next COPY, first in line. The COPY is one statement, streamed while the writer decodes and
   * encodes its jobs' bodies, so its length follows the writer's speed, not only its size: on a
   * loaded machine a COPY of 5,000 one-span traces ran past the second that bounds every
   * statement of the write path (docs/benchmarks.md).
   */
  maxOpenMs: number
  /**
   * How long the first job waiting for a COPY may wait for others to join it (ms; default 0: a
   * COPY starts as soon as a slot is free). A writer that keeps up with its queue takes each
   * job as it is queued, so without it every job of a few tens of one-span traces was a COPY
   * and a transaction of its own, with its summary delta, its fold and their statements: the
   * writer and Postgres spent about twice a span what they spend draining a backlog
   * (docs/benchmarks.md, issue 49 §7). The same linger ingest's group commit has for Redis.
   */
  lingerMs?: number
  /** The linger ends once this many spans wait (default maxSpans). */
  lingerUntilSpans?: number
  /**
   * Or this many jobs of one holder (copy's `holder`; jobs without one are one holder's): the most
   * a holder takes at once (a queue shard's worker, its concurrency), so its next job cannot come
   * until a COPY ends, and lingering on would only hold back its queue, however idle the other
   * holders are (default: no bound).
   */
  lingerUntilJobs?: number
  /**
   * Whether jobs not yet here wait on what the waiting ones hold (the writer's body budget): none
   * of them can join before a COPY ends, so no linger while it answers true. Its owner calls
   * `reconsider()` when the answer turns true.
   */
  lingerHeldBack?: () => boolean
}

interface Waiting {
  sources: readonly ProjectSpanSource[]
  spans: number
  express: boolean
  holder: string | undefined
  /** performance.now() when it began waiting. */
  at: number
  resolve(outcome: CombinedCopyOutcome): void
  reject(error: unknown): void
}

export class CopyCombiner implements SharedCopy {
  readonly #db: Db
  readonly #options: CopyCombinerOptions
  #waiting: Waiting[] = []
  #inFlight = 0
  /** The one COPY of express jobs alone that may run beyond maxInFlight. */
  #expressInFlight = false
  #scheduled = false
  /** The timer that ends a linger, while one runs. */
  #lingering: ReturnType<typeof setTimeout> | null = null

  constructor(db: Db, options: CopyCombinerOptions) {
    this.#db = db
    this.#options = options
  }

  /**
   * Stores the sources (`spans` spans in all) in the next combined COPY. Rejects only with the
   * error of a COPY the job had to itself (what copySpans throws).
   */
  copy(sources: readonly ProjectSpanSource[], spans: number, lane: CopyLane = 'usual', holder?: string): Promise<CombinedCopyOutcome> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ sources, spans, express: lane === 'express', holder, at: performance.now(), resolve, reject })
      this.#schedule()
    })
  }

  /** Looks again whether the waiting jobs may still linger (lingerHeldBack's answer changed). */
  reconsider(): void {
    this.#schedule()
  }

  /** Which COPY may start now: one of the usual maxInFlight, the one extra for express jobs alone, or none. */
  #canStart(): 'usual' | 'express' | null {
    if (this.#inFlight < this.#options.maxInFlight) return this.#waiting.length > 0 ? 'usual' : null
    return !this.#expressInFlight && this.#waiting.some((waiting) => waiting.express) ? 'express' : null
  }

  /** Milliseconds the waiting jobs may still linger before a COPY takes them; 0 when it may start now. */
  #lingerLeft(): number {
    const { lingerMs = 0, lingerUntilSpans = this.#options.maxSpans, lingerUntilJobs = Number.POSITIVE_INFINITY } = this.#options
    const oldest = this.#waiting[0]
    if (lingerMs === 0 || oldest === undefined || this.#options.lingerHeldBack?.() === true) return 0
    let spans = 0
    const jobsOfHolder = new Map<string | undefined, number>()
    for (const waiting of this.#waiting) {
      spans += waiting.spans
      const jobs = (jobsOfHolder.get(waiting.holder) ?? 0) + 1
      if (jobs >= lingerUntilJobs) return 0
      jobsOfHolder.set(waiting.holder, jobs)
    }
    if (spans >= lingerUntilSpans) return 0
    // The oldest job, not the first in line: a job put back by a COPY that ended early lingers no more.
    let since = oldest.at
    for (const waiting of this.#waiting) since = Math.min(since, waiting.at)
    return Math.max(0, since + lingerMs - performance.now())
  }

  #schedule(): void {
    if (this.#scheduled || this.#canStart() === null) return
    const left = this.#lingerLeft()
    if (left > 0) {
      // Woken when the linger is over; a job that fills it wakes the schedule earlier.
      this.#lingering ??= setTimeout(() => {
        this.#lingering = null
        this.#schedule()
      }, left)
      return
    }
    if (this.#lingering !== null) {
      clearTimeout(this.#lingering)
      this.#lingering = null
    }
    this.#scheduled = true
    // setImmediate, not a microtask: jobs made ready in the same turn of the event loop join.
    setImmediate(() => {
      this.#scheduled = false
      const slot = this.#canStart()
      if (slot === null) return
      const group = this.#take(slot === 'express')
      if (slot === 'usual') this.#inFlight++
      else this.#expressInFlight = true
      void this.#run(group).finally(() => {
        if (slot === 'usual') this.#inFlight--
        else this.#expressInFlight = false
        this.#schedule()
      })
      this.#schedule()
    })
  }

  /**
   * The next COPY's jobs, first fit: express jobs first, then (unless `expressOnly`) the others,
   * each in arrival order. The first always goes, and so does every later one that still fits,
   * so a small job (a project's fresh trace) is not held behind a large one (a flooding
   * project's) that must wait for the next COPY. A project has only its first few turns express
   * at a time, and the oldest of the others goes first once they have room, so no job waits forever.
   */
  #take(expressOnly: boolean): Waiting[] {
    const group: Waiting[] = []
    let spans = 0
    for (const express of expressOnly ? [true] : [true, false]) {
      for (const next of this.#waiting) {
        if (next.express !== express || (group.length > 0 && spans + next.spans > this.#options.maxSpans)) continue
        group.push(next)
        spans += next.spans
      }
    }
    const taken = new Set(group)
    this.#waiting = this.#waiting.filter((waiting) => !taken.has(waiting))
    return group
  }

  async #run(group: readonly Waiting[]): Promise<void> {
    // Each job's spans counted as the COPY asks for them: every span of a COPY that commits is new.
    const counts = group.map(() => 0)
    const sources = group.flatMap((waiting, index) =>
      waiting.sources.map((source): ProjectSpanSource => ({
        projectId: source.projectId,
        spans() {
          const spans = source.spans()
          counts[index] = (counts[index] as number) + spans.length
          return spans
        },
      })),
    )
    const cut = this.#cutAfterMaxOpen(group)
    let outcome: { inserted: number | undefined } | { error: unknown }
    try {
      outcome = { inserted: await copySpans(this.#db, sources, cut.endBefore) }
    } catch (error) {
      outcome = { error }
    }
    // The jobs the COPY took; those it ended before go first in line for the next, in their order.
    const copied = group.slice(0, cut.jobs())
    this.#waiting.unshift(...group.slice(copied.length))
    const alone = copied.length === 1
    if ('error' in outcome) {
      for (const waiting of copied) {
        if (alone) waiting.reject(outcome.error)
        else waiting.resolve('alone')
      }
    } else if (outcome.inserted === undefined) {
      // A span already stored, or a value for statements: one of the jobs, whose COPY alone will tell.
      for (const waiting of copied) waiting.resolve(alone ? 'statements' : 'alone')
    } else {
      copied.forEach((waiting, index) => waiting.resolve({ inserted: counts[index] as number }))
    }
  }

  /**
   * Where a COPY of `group` ends: `endBefore` ends it before the first source of a job once it has
   * been open maxOpenMs; `jobs()` is then how many jobs it took (all of them if it never ended early).
   */
  #cutAfterMaxOpen(group: readonly Waiting[]): { endBefore: EndBefore; jobs: () => number } {
    /** The job each job's first source starts, by source index. */
    const jobStartingAt = new Map<number, number>()
    let next = 0
    group.forEach((waiting, index) => {
      jobStartingAt.set(next, index)
      next += waiting.sources.length
    })
    const opened = performance.now()
    let jobs = group.length
    return {
      endBefore: (sourceIndex) => {
        const job = jobStartingAt.get(sourceIndex)
        if (job === undefined || performance.now() - opened < this.#options.maxOpenMs) return false
        jobs = job
        return true
      },
      jobs: () => jobs,
    }
  }
}
