import type { Db } from '@tracewell/db'
import { storeSpans, summariseAll, type StoreResult } from '@tracewell/write-path'
import { InvalidSpanBatchJobError, UnrecoverableError, type ProjectSpans } from '@tracewell/queue'
import type { SpanPricer } from './span-pricer.ts'

/** What a job came to: the spans it inserted, and those stored already. */
export type SpanBatchResult = StoreResult

/**
 * Postgres errors that no retry can fix: data exceptions (22xxx) and integrity violations
 * (23xxx) mean the payload itself is bad. Everything else (refused connections, restarts,
 * timeouts, a schema that is being migrated) is worth retrying. So is a check violation (23514):
 * spans has no CHECK of its own, and the only one a span can fail is the default partition's,
 * when its day's partition was attached while the span waited to go there; tried again, it goes
 * to that partition (docs/operations.md#partitions).
 */
function isPoisonDatabaseError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code !== '23514' && /^2[23][0-9A-Z]{3}$/.test(code)
}

/**
 * What a job fails with: UnrecoverableError for a job no retry can fix (a bad envelope, a body
 * that is missing or no longer decodes, data the database refuses), which sends it straight to
 * the failed set instead of through every retry; any other error as it is, to be retried.
 */
export function jobFailure(error: unknown): unknown {
  if (error instanceof InvalidSpanBatchJobError) return new UnrecoverableError(error.message)
  if (isPoisonDatabaseError(error)) return new UnrecoverableError(`span-batch job rejected by the database: ${(error as Error).message}`)
  return error
}

/**
 * What the in-process queue (`npm start` without Redis) runs for each batch it hands over:
 * records, never encoded, priced and stored (storeSpans), then folded into the summaries before
 * answering, so that with one process a trace acknowledged is a trace listed (a separate writer
 * leaves that to its summariser's loop). Failures are thrown as jobFailure says.
 */
export function inProcessSpanBatchProcessor(db: Db, pricer: SpanPricer): (batches: readonly ProjectSpans[]) => Promise<SpanBatchResult> {
  return async (batches) => {
    let result: SpanBatchResult
    try {
      result = await storeSpans(db, await pricer.priced(batches.map((batch) => ({ projectId: batch.projectId, spans: () => batch.spans }))))
    } catch (error) {
      throw jobFailure(error)
    }
    await summariseAll(db)
    return result
  }
}
