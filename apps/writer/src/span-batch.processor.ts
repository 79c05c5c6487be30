import type { Db } from '@tracewell/db'
import { copySpanSources, insertSpanSourcesByStatement, storeSpanSources, summariseAll, type CombinedCopyOutcome, type CopyCombiner, type CopyLane, type ProjectSpanSource } from '@tracewell/write-path'
import { InvalidSpanBatchJobError, type ProjectSpans } from '@tracewell/queue'
import { UnrecoverableError } from 'bullmq'
import type { SpanPricer } from './span-pricer.ts'

export interface SpanBatchResult {
  inserted: number
  duplicates: number
}

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
 * Stores the spans of one queue job. Idempotent: a span already stored (same project, trace and
 * span id) is skipped, so a job that is redone after a crash or a retry never makes a second row.
 * Failures are thrown as jobFailure says. The batches' spans are asked for one batch at
 * a time (storeSpanSources), so a large job's records need not all be alive at once; each span is
 * priced as it is asked for (SpanPricer).
 */
export async function storeSpanBatches(db: Db, batches: readonly ProjectSpanSource[], pricer: SpanPricer): Promise<SpanBatchResult> {
  try {
    return await storeSpanSources(db, await pricer.priced(batches))
  } catch (error) {
    throw jobFailure(error)
  }
}

/**
 * storeSpanBatches in two halves, for a job whose sources are request bodies freed as they are
 * decoded: first the COPY, which asks for each batch's spans once and answers undefined when
 * the job must go by statement instead (a span of it already stored, by an earlier try of the
 * job, or a value only statements store exactly), with nothing stored; then, given the
 * sources again, those statements, idempotent as storeSpanBatches is. Both throw what the
 * database threw: the caller, which also reads the bodies, turns every failure into jobFailure's.
 */
export async function copySpanBatches(db: Db, batches: readonly ProjectSpanSource[], pricer: SpanPricer): Promise<SpanBatchResult | undefined> {
  const inserted = await copySpanSources(db, await pricer.priced(batches))
  return inserted === undefined ? undefined : { inserted, duplicates: 0 }
}

/** copySpanBatches in a COPY shared with the jobs ready beside it (CopyCombiner); what the job's share came to. */
export async function copyCombinedSpanBatches(combiner: CopyCombiner, batches: readonly ProjectSpanSource[], pricer: SpanPricer, spans: number, lane: CopyLane = 'usual'): Promise<CombinedCopyOutcome> {
  return combiner.copy(await pricer.priced(batches), spans, lane)
}

/** The statement half of copySpanBatches. */
export async function insertSpanBatchesByStatement(db: Db, batches: readonly ProjectSpanSource[], pricer: SpanPricer): Promise<SpanBatchResult> {
  return insertSpanSourcesByStatement(db, await pricer.priced(batches))
}

/**
 * Stores spans handed over by the in-process queue (`npm start` without Redis): records, never
 * encoded. Then folds them into the summaries before answering, so that with one process a trace
 * acknowledged is a trace listed (a separate writer leaves that to its summariser's loop).
 */
export async function storeProjectSpans(db: Db, batches: readonly ProjectSpans[], pricer: SpanPricer): Promise<SpanBatchResult> {
  const result = await storeSpanBatches(db, batches.map((batch) => ({ projectId: batch.projectId, spans: () => batch.spans })), pricer)
  await summariseAll(db)
  return result
}
