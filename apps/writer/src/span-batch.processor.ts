import { storeSpans, type Db, type SpanInsert } from '@tracewell/db'
import { spansOfBatch, type InlineSpanBatchJob, type ProjectSpans } from '@tracewell/queue'
import { UnrecoverableError } from 'bullmq'

/** Spans per COPY (or INSERT): large enough to amortise the round trip, small enough to bound one statement. */
const spansPerStatement = 5_000

export interface SpanBatchResult {
  inserted: number
  duplicates: number
}

/**
 * Postgres errors that no retry can fix: data exceptions (22xxx) and integrity violations
 * (23xxx) mean the payload itself is bad. Everything else (refused connections, restarts,
 * timeouts, a schema that is being migrated) is worth retrying.
 */
function isPoisonDatabaseError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code)
}

/**
 * Stores the spans of one queue job. Idempotent: a span already stored (same project, trace and
 * span id) is skipped, so a job that is redone after a crash or a retry never makes a second row.
 * Data the database refuses throws UnrecoverableError, which sends the job straight to the failed
 * set instead of through every retry; any other failure throws as it is, to be retried.
 */
export async function storeSpanBatches(db: Db, batches: readonly ProjectSpans[]): Promise<SpanBatchResult> {
  const rows: SpanInsert[] = []
  for (const { projectId, spans } of batches) for (const span of spans) rows.push({ ...span, projectId })
  let inserted = 0
  try {
    for (let start = 0; start < rows.length; start += spansPerStatement) {
      inserted += await storeSpans(db, rows.slice(start, start + spansPerStatement))
    }
  } catch (error) {
    if (isPoisonDatabaseError(error)) throw new UnrecoverableError(`span-batch job rejected by the database: ${(error as Error).message}`)
    throw error
  }
  return { inserted, duplicates: rows.length - inserted }
}

/** Stores a job of the in-process queue (`npm start` without Redis), whose spans travel inline. */
export function processSpanBatchJob(db: Db, job: InlineSpanBatchJob): Promise<SpanBatchResult> {
  return storeSpanBatches(db, job.batches.map((batch) => ({ projectId: batch.projectId, spans: spansOfBatch(batch) })))
}
