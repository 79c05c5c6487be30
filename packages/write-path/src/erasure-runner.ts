import { setTimeout as sleep } from 'node:timers/promises'
import { nextOpenErasure, nextRecheckInMs, type Db } from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { eraseBatch, type EraseBatchOptions } from './erasure-batch.ts'

// The erasure loop, in every writer beside its summariser (and in `npm start`): takes the oldest
// erasure with work to do and runs its batches back to back (erasure-batch.ts). Its state is all in
// Postgres (the request's status, the traces taken), so a writer killed or restarted mid-erasure
// leaves it to the next look of any writer. Batches take the fold's lock, so erasures and folds
// across all writers run one at a time.

export interface ErasureRunnerOptions extends EraseBatchOptions {
  db: Db
  logger: Logger
  /** How long to wait when no erasure has work, or the lock was busy. */
  pollMs: number
}

export interface ErasureRunner {
  /** Ends the loop after the batch under way, if any. */
  close(): Promise<void>
}

const MAX_BACKOFF_MS = 5_000

export function startErasureRunner(options: ErasureRunnerOptions): ErasureRunner {
  const { db, logger, pollMs } = options
  const stopping = new AbortController()
  const wait = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => {})
  let failures = 0

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const erasure = await nextOpenErasure(db)
        if (erasure === undefined) {
          // A re-check falling due sooner than a poll is taken on time.
          const due = await nextRecheckInMs(db)
          await wait(due === null ? pollMs : Math.max(10, Math.min(pollMs, due)))
          continue
        }
        const result = await eraseBatch(db, erasure, options)
        failures = 0
        if (typeof result === 'string') {
          await wait(pollMs)
          continue
        }
        if (result.traces === 0) logger.info({ erasureId: erasure.id, projectId: erasure.projectId, from: erasure.status }, 'erasure: pass finished')
      } catch (error) {
        // Postgres down, or a batch that conflicted with another transaction: the batch rolled back whole.
        failures++
        const backoff = Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 10))
        if ((failures & (failures - 1)) === 0) logger.warn({ err: error, failures, backoffMs: backoff }, 'erasure: batch failed, retrying')
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
