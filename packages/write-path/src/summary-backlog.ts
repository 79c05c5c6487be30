import { setTimeout as sleep } from 'node:timers/promises'
import { sql, type Db } from '@tracewell/db'
import { foldSummaryDeltas, DEFAULT_FOLD_LIMITS, type FoldLimits } from './summary-fold.ts'

/** What is stored but not yet in the summaries. */
export interface SummaryBacklog {
  /** Stored batches whose deltas wait to be folded. */
  deltas: number
  /** Traces those deltas touch (a trace in two batches counts twice). */
  traces: number
  /** How long the oldest has waited, in seconds; 0 when none waits. */
  lagSeconds: number
}

/** The backlog of the summariser: what /readyz and the console report as its lag. */
export async function summaryBacklog(db: Db): Promise<SummaryBacklog> {
  const { rows } = await sql<{ deltas: string; traces: string | null; lag: number | null }>`
    select count(*) as deltas, sum(trace_count) as traces,
      extract(epoch from now() - (select created_at from summary_deltas order by id limit 1))::float8 as lag
    from summary_deltas`.execute(db)
  const row = rows[0]
  return { deltas: Number(row?.deltas ?? 0), traces: Number(row?.traces ?? 0), lagSeconds: Math.max(0, row?.lag ?? 0) }
}

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
