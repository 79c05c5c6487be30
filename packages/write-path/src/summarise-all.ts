import { setTimeout as sleep } from 'node:timers/promises'
import type { Db } from '@tracewell/db'
import { foldSummaryDeltas, DEFAULT_FOLD_LIMITS, type FoldLimits } from './summary-fold.ts'

/**
 * Folds until no delta is left, waiting its turn while another summariser holds the fold: what
 * `npm start`'s in-process pipeline does after each batch (so a trace is listed as soon as it is
 * acknowledged), and what tests and benchmarks call to wait for the summaries. Answers the
 * traces folded.
 */
export async function summariseAll(db: Db, limits: FoldLimits = DEFAULT_FOLD_LIMITS): Promise<number> {
  let traces = 0
  for (;;) {
    const result = await foldSummaryDeltas(db, limits)
    if (result === 'busy') {
      await sleep(20)
      continue
    }
    if (result.deltas === 0) return traces
    traces += result.traces
  }
}
