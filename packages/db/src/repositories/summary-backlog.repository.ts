import { sql } from 'kysely'
import type { Executor } from './executor.ts'

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
export async function summaryBacklog(db: Executor): Promise<SummaryBacklog> {
  const { rows } = await sql<{ deltas: string; traces: string | null; lag: number | null }>`
    select count(*) as deltas, sum(trace_count) as traces,
      extract(epoch from now() - (select created_at from summary_deltas order by id limit 1))::float8 as lag
    from summary_deltas`.execute(db)
  const row = rows[0]
  return { deltas: Number(row?.deltas ?? 0), traces: Number(row?.traces ?? 0), lagSeconds: Math.max(0, row?.lag ?? 0) }
}

/** Whether any stored batch waits to be folded: the one statement an idle writer's summariser asks. */
export async function summaryDeltasWaiting(db: Executor): Promise<boolean> {
  const { rows } = await sql<{ waiting: boolean }>`select exists (select from summary_deltas) as waiting`.execute(db)
  return rows[0]?.waiting === true
}
