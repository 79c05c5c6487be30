import { setTimeout as sleep } from 'node:timers/promises'
import { summaryDeltasWaiting, type Db } from '@tracewell/db'
import type { Summariser } from '@tracewell/write-path'
import { startSummariserThread, type SummariserThread, type SummariserThreadOptions } from './summariser-thread.ts'

export interface SummariserOnFirstDeltas extends Summariser {
  /** The thread, once started. */
  readonly thread: SummariserThread | undefined
}

/**
 * Starts the summariser thread (a second isolate with its own modules, heap and pool) when a
 * delta first waits to be folded, not at boot: a writer that has stored nothing rests at a
 * fraction of the memory (docs/benchmarks.md#at-rest). Until then the event loop asks every poll
 * whether any writer's delta waits, the poll the thread itself would make; once started it stays.
 */
export function startSummariserThreadOnFirstDeltas(db: Db, options: SummariserThreadOptions): SummariserOnFirstDeltas {
  const stopping = new AbortController()
  let failing = false
  let thread: SummariserThread | undefined
  const started = (async () => {
    while (!stopping.signal.aborted) {
      try {
        if (await summaryDeltasWaiting(db)) return (thread = startSummariserThread(options))
        failing = false
      } catch (error) {
        // Postgres down or restarting: said once a streak, as the thread's own fold would.
        if (!failing) options.logger.warn({ err: error }, 'summariser: cannot ask for deltas to fold, retrying')
        failing = true
      }
      await sleep(options.pollMs, undefined, { signal: stopping.signal }).catch(() => {})
    }
    return undefined
  })()
  return {
    get thread() {
      return thread
    },
    async close() {
      stopping.abort()
      await (await started)?.close()
    },
  }
}
