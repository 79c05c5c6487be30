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
export async function deleteOldestSpansBefore(db: Executor, projectId: string, cutoff: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from spans where ctid = any(array(
      select ctid from spans where project_id = ${projectId} and start_time < ${cutoff} order by start_time limit ${limit}
    ))`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}
