import { sql } from 'kysely'
import type { Executor } from './executor.ts'

/**
 * Deletes up to `limit` of a project's oldest spans that started strictly before `cutoff` (a span
 * starting exactly at the cutoff is kept); returns how many. The retention janitor calls it in a
 * loop, one short transaction per batch, so no statement locks or scans a whole table.
 *
 * Why ORDER BY start_time: it makes the planner walk the (project_id, start_time) index from its
 * oldest end. Without it, a large project's batch is planned as a sequential scan with LIMIT,
 * which has to step over every row deleted by the earlier batches of the same run (they are dead
 * but not yet vacuumed), so a run's cost grows with the square of its size; in order, the index
 * entries of deleted rows are marked dead on first sight and cost next to nothing afterwards.
 */
export function deleteOldestSpansBefore(db: Executor, projectId: string, cutoff: Date, limit: number): Promise<number> {
  return deleteOldestRowsBefore(db, 'spans', projectId, cutoff, limit)
}

/** Up to `limit` of a project's rows of `table` (keyed by project_id, ordered by start_time) that started before `cutoff`. */
async function deleteOldestRowsBefore(db: Executor, table: 'spans' | 'trace_summaries', projectId: string, cutoff: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from ${sql.table(table)} where ctid = any(array(
      select ctid from ${sql.table(table)} where project_id = ${projectId} and start_time < ${cutoff} order by start_time limit ${limit}
    ))`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}

/**
 * Deletes up to `limit` of a project's trace summaries whose trace started before `cutoff`: the
 * trace's first spans are gone (deleteOldestSpansBefore), so its row would list it wrongly. Any
 * later spans of such a trace stay readable by id until the run that reaches their own start.
 * Batches of spans are at least as many as summaries (every summarised trace has a span before
 * its cutoff), so one call per span batch keeps up.
 */
export function deleteTraceSummariesBefore(db: Executor, projectId: string, cutoff: Date, limit: number): Promise<number> {
  return deleteOldestRowsBefore(db, 'trace_summaries', projectId, cutoff, limit)
}

/**
 * Deletes up to `limit` of a project's usage rollups of hours that ended by `cutoff`: every span
 * of such an hour started before the cutoff and is deleted with it. The hour holding the cutoff
 * keeps its row (some of its spans are kept) until a later run passes its end. The dimensions are
 * listed so that the primary key is walked as one range of hours per dimension.
 */
export async function deleteUsageRollupsBefore(db: Executor, projectId: string, cutoff: Date, limit: number): Promise<number> {
  const lastHour = new Date(cutoff.getTime() - 3_600_000)
  const result = await sql`
    delete from usage_rollups where ctid = any(array(
      select ctid from usage_rollups
      where project_id = ${projectId} and dimension in ('all', 'model', 'vendor', 'service', 'user') and hour <= ${lastHour}
      limit ${limit}
    ))`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}

/**
 * Deletes up to `limit` of a project's session summaries whose last trace ended before `cutoff`:
 * every trace of such a session started before it and is deleted with its spans. A session that
 * straddles the cutoff keeps its row, figures included, until a run passes its last trace.
 */
export async function deleteSessionSummariesBefore(db: Executor, projectId: string, cutoff: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from session_summaries where ctid = any(array(
      select ctid from session_summaries where project_id = ${projectId} and last_seen < ${cutoff} order by last_seen limit ${limit}
    ))`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}
