import { setTimeout as sleep } from 'node:timers/promises'
import { sql, type Db } from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { foldSummaryDeltas, DEFAULT_FOLD_LIMITS, type FoldLimits } from './summary-fold.ts'
import type { SummariserMetrics } from './summariser.metrics.ts'

// The summariser: a loop in every writer that folds summary deltas into the summaries. Only one
// fold runs at a time across all writers (summary-fold.ts); the others find it busy and wait for
// their next turn, so a writer that dies mid-fold is replaced by the next one within a poll.

export interface SummariserOptions {
  db: Db
  logger: Logger
  /** Its counters (summariserMetrics), made by the caller: a summariser in a thread of its own loads no metrics library. */
  metrics?: SummariserMetrics
  /** Told of every fold that ran (where `metrics` cannot be reached: a summariser in a thread of its own). */
  onFolded?(folded: { deltas: number; traces: number }): void
  /**
   * How long to wait when nothing was folded (none waiting, or another summariser's turn), and the
   * least time from one fold's start to the next when the first found less than half its limit.
   */
  pollMs?: number
  limits?: FoldLimits
  /**
   * Vacuum summary_deltas once this many deltas were folded, when the summariser has caught up:
   * each fold deletes the rows it read, and where autovacuum is off or behind, the table and its
   * index would grow with every delta ever written, and the claim would step over the dead rows.
   * Vacuumed when caught up, the table holds almost nothing but dead rows, so the vacuum is short
   * (under load a vacuum of a backlog's table took 3 s); behind for twenty times as many, it
   * vacuums anyway.
   */
  vacuumEveryDeltas?: number
}

export interface Summariser {
  /** Ends the loop after the fold under way, if any. */
  close(): Promise<void>
}

const MAX_BACKOFF_MS = 5_000

export function startSummariser(options: SummariserOptions): Summariser {
  const { db, logger } = options
  const pollMs = options.pollMs ?? 200
  const limits = options.limits ?? DEFAULT_FOLD_LIMITS
  const vacuumEvery = options.vacuumEveryDeltas ?? 1_000
  const metrics = options.metrics
  const stopping = new AbortController()
  let foldedSinceVacuum = 0
  let failures = 0

  const wait = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => {})
  const waitUntil = async (at: number) => {
    const left = at - performance.now()
    if (left > 0) await wait(left)
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const foldStarted = performance.now()
        const result = await foldSummaryDeltas(db, limits)
        if (failures > 0) logger.info({ failures }, 'summariser: folding again')
        failures = 0
        if (result !== 'busy') {
          metrics?.deltas.inc(result.deltas)
          metrics?.traces.inc(result.traces)
          options.onFolded?.(result)
          foldedSinceVacuum += result.deltas
          const caughtUp = result.deltas === 0
          if ((caughtUp && foldedSinceVacuum >= vacuumEvery) || foldedSinceVacuum >= 20 * vacuumEvery) {
            foldedSinceVacuum = 0
            await vacuumDeltas(db, logger)
          }
        }
        if (result === 'busy' || result.deltas === 0) await wait(pollMs)
        // A fold that found less than half its limit had the summaries nearly caught up: the next
        // waits out the rest of pollMs from this one's start, so that a steady stream is folded a
        // poll's worth at a time instead of a few batches at a time, each fold paying its
        // statements and commit (end to end on one-span traces, a fifth of Postgres's CPU a span;
        // docs/benchmarks.md). A fold near its limit means a backlog: the next one goes at once.
        else if (result.traces < limits.maxTraces / 2) await waitUntil(foldStarted + pollMs)
      } catch (error) {
        // Postgres down or restarting: back off, one line per failure streak's doubling.
        failures++
        const backoff = Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 10))
        if ((failures & (failures - 1)) === 0) logger.warn({ err: error, failures, backoffMs: backoff }, 'summariser: fold failed, retrying')
        await wait(backoff)
      }
    }
  })()

  return {
    async close() {
      stopping.abort()
      await loop
    },
  }
}

async function vacuumDeltas(db: Db, logger: Logger): Promise<void> {
  try {
    // truncate false: giving the file's empty end back takes a lock that writers' inserts would wait on.
    await sql`vacuum (truncate false) summary_deltas`.execute(db)
  } catch (error) {
    // Not the table's owner (a role without MAINTAIN): autovacuum is then the table's only vacuum.
    logger.warn({ err: error }, 'summariser: could not vacuum summary_deltas')
  }
}
