import { sql } from 'kysely'
import { spendAssignments, type CallSpend } from './call-spend.ts'
import type { Executor } from './executor.ts'
import type { QueuedRow } from './queued-row.ts'

// The rows the evaluator's queues run, judgments and experiment results alike (docs/architecture.md,
// "job row"): created pending, an attempt counted as each try starts, its calls' spend added
// whatever becomes of it, the last error kept until one is final (failed) or it completes, swept
// when it stayed pending too long (its queue job may have been lost), and the batch it belongs to
// (a run, an experiment) completed once none of its rows is pending. One implementation for both
// kinds; judgments.repository.ts and experiments.repository.ts name the steps for theirs.

/** A kind of job row: its table, its batch's table and the column that links them, and where the kinds differ. */
export interface JobRowKind {
  rows: 'evaluation_jobs' | 'experiment_results'
  batches: 'evaluation_runs' | 'experiments'
  batchKey: 'run_id' | 'experiment_id'
  /** Whether attempts and errors touch only pending rows (a judgment skipped or done meanwhile is left alone). */
  pendingOnly: boolean
  /** Whether the stale sweep takes only rows of a running batch (a judgment may have no run at all). */
  staleInRunningBatchOnly: boolean
}

/** Judgments: rows of evaluation_jobs, of evaluation_runs when a run asked for them. */
export const judgmentRows: JobRowKind = { rows: 'evaluation_jobs', batches: 'evaluation_runs', batchKey: 'run_id', pendingOnly: true, staleInRunningBatchOnly: false }

/** Experiment results: rows of experiment_results, one per dataset item of an experiment. */
export const experimentResultRows: JobRowKind = { rows: 'experiment_results', batches: 'experiments', batchKey: 'experiment_id', pendingOnly: false, staleInRunningBatchOnly: true }

/** Marks running batches whose rows are all done as completed. */
export async function completeFinishedBatches(db: Executor, kind: JobRowKind): Promise<void> {
  await sql`
    update ${sql.table(kind.batches)} b set status = 'completed', finished_at = now()
    where b.status = 'running' and not exists (select 1 from ${sql.table(kind.rows)} r where r.${sql.ref(kind.batchKey)} = b.id and r.status = 'pending')`.execute(db)
}

/** Pending rows untouched for this long: their queue job may have been lost (a crash between the row and the queue). */
export async function stalePendingRows(db: Executor, kind: JobRowKind, olderThanMs: number, limit: number): Promise<QueuedRow[]> {
  const inRunningBatch = kind.staleInRunningBatchOnly
    ? sql`and exists (select 1 from ${sql.table(kind.batches)} b where b.id = r.${sql.ref(kind.batchKey)} and b.status = 'running')`
    : sql``
  const { rows } = await sql<{ id: string; project_id: string }>`
    select r.id, r.project_id from ${sql.table(kind.rows)} r
    where r.status = 'pending' and r.updated_at < now() - ${`${olderThanMs} milliseconds`}::interval ${inRunningBatch}
    order by r.updated_at limit ${limit}`.execute(db)
  return rows.map((row) => ({ jobId: row.id, projectId: row.project_id }))
}

/** Counts an attempt at a row, so a stale pending row is told from a live one; its number (1 for the first), or null when the kind takes pending rows only and this one is not. */
export async function recordRowAttempt(db: Executor, kind: JobRowKind, id: string): Promise<number | null> {
  const { rows } = await sql<{ attempts: number }>`
    update ${sql.table(kind.rows)} set attempts = attempts + 1, updated_at = now()
    where id = ${id} ${kind.pendingOnly ? sql`and status = 'pending'` : sql``} returning attempts`.execute(db)
  return rows[0]?.attempts ?? null
}

/**
 * Adds calls' spend to a row, whatever becomes of it (a failed attempt's calls cost as much as a
 * successful one's). Tokens and cost stay null until a call reports some.
 */
export async function addRowSpend(db: Executor, kind: JobRowKind, id: string, spend: CallSpend): Promise<void> {
  await sql`update ${sql.table(kind.rows)} set ${spendAssignments(spend)}, updated_at = now() where id = ${id}`.execute(db)
}

/** Keeps the last error of an attempt; `final` marks the row failed (no attempt is left), with `traceId`, the failed call's trace, when given. */
export async function recordRowError(db: Executor, kind: JobRowKind, id: string, error: string, final: boolean, traceId: string | null = null): Promise<void> {
  const assignments = [sql`error = ${error.slice(0, 2_000)}`, sql`updated_at = now()`]
  if (final) assignments.push(sql`status = 'failed'`)
  if (traceId !== null) assignments.push(sql`trace_id = ${traceId}`)
  await sql`
    update ${sql.table(kind.rows)} set ${sql.join(assignments, sql`, `)}
    where id = ${id} ${kind.pendingOnly ? sql`and status = 'pending'` : sql``}`.execute(db)
}
