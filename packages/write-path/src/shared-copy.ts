import type { ProjectSpanSource } from './span-statement.ts'

// What storing spans needs of a COPY shared by several jobs (copy-combiner.ts), apart from the
// combiner itself: span-store.ts asks for it by this shape, so the two files do not import each
// other.

/**
 * How a job waits for its COPY. `express`: a job whose project had little else unfinished when it
 * was queued (one of its first turns, project-turns.ts). Express jobs go first into every COPY, and when
 * `maxInFlight` COPYs are running, express jobs alone may still start one more: a project that
 * sends a trace now and then is stored beside a flooding project's COPYs, not behind them.
 */
export type CopyLane = 'usual' | 'express'

/**
 * What a job's share of a combined COPY came to: the spans it inserted; `statements` when its
 * spans must go by the idempotent statements instead (a span of the COPY was already stored, or
 * held a value only statements store exactly), nothing of it stored; `alone` when the combined
 * COPY failed otherwise, nothing stored, so that each job is tried by itself and the failure
 * lands on the job that caused it, not on those that shared its COPY.
 */
export type CombinedCopyOutcome = { inserted: number } | 'statements' | 'alone'

/** A COPY shared by the jobs ready at once (CopyCombiner). */
export interface SharedCopy {
  copy(sources: readonly ProjectSpanSource[], spans: number, lane?: CopyLane, holder?: string): Promise<CombinedCopyOutcome>
}
