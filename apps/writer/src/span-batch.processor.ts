import { Value } from '@sinclair/typebox/value'
import { insertSpans, type Db, type SpanInsert } from '@tracewell/db'
import type { SpanRecord } from '@tracewell/otlp'
import { SpanBatchJobSchema, spansOfBatch, type SpanBatchJob } from '@tracewell/queue'
import { UnrecoverableError } from 'bullmq'

/** Spans per INSERT: one statement carries the batch as one JSON parameter (see insertSpans). */
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

/** The batch's spans, including those carried as JSON text (checked like the envelope). */
function queuedSpans(batch: SpanBatchJob['batches'][number], index: number): SpanRecord[] {
  try {
    return spansOfBatch(batch)
  } catch (error) {
    throw new UnrecoverableError(`invalid span-batch job: /batches/${index}/${(error as Error).message}`)
  }
}

/**
 * Stores one queue job. Idempotent: a span already stored (same project, trace and span id) is
 * skipped, so a job that is redone after a crash or a retry never makes a second row. A job whose
 * envelope or data is malformed throws UnrecoverableError, which sends it straight to the failed
 * set instead of through every retry.
 */
export async function processSpanBatchJob(db: Db, job: SpanBatchJob): Promise<SpanBatchResult> {
  if (!Value.Check(SpanBatchJobSchema, job)) {
    const first = Value.Errors(SpanBatchJobSchema, job).First()
    throw new UnrecoverableError(`invalid span-batch job: ${first ? `${first.path || '/'} ${first.message}` : 'not an object'}`)
  }
  const rows: SpanInsert[] = job.batches.flatMap((batch, index) =>
    queuedSpans(batch, index).map((span) => ({ ...span, projectId: batch.projectId })),
  )
  let inserted = 0
  try {
    for (let start = 0; start < rows.length; start += spansPerStatement) {
      inserted += await insertSpans(db, rows.slice(start, start + spansPerStatement))
    }
  } catch (error) {
    if (isPoisonDatabaseError(error)) throw new UnrecoverableError(`span-batch job rejected by the database: ${(error as Error).message}`)
    throw error
  }
  return { inserted, duplicates: rows.length - inserted }
}
