import { sql } from 'kysely'
import { TEXT_BLOCK_MS } from '@tracewell/text-filter'
import type { Executor } from './executor.ts'
import { GROUP_MEMBER_DAY_DIMENSIONS } from './group-member-cells.ts'

/** What one batch of deleteOldestSpansBefore did. */
export interface SpanDeletion {
  deleted: number
  /**
   * The latest start among the spans deleted (null when none was): every span of the project that
   * started before it, and before the cutoff, is gone, this batch's or an earlier one's. The
   * janitor deletes what the writer keeps beside the spans up to it (deleteSummariesOfWindow).
   */
  latestStart: Date | null
}

/**
 * Deletes up to `limit` of a project's oldest spans in one partition of `spans` (by its own name)
 * that started strictly before `cutoff` (a span starting exactly at the cutoff is kept). The
 * retention janitor calls it in a loop, one short transaction per batch, so no statement locks or
 * scans a whole table.
 *
 * One partition at a time, because rows are picked by ctid, which is unique only within a table:
 * on the partitioned parent, `ctid = any(…)` would delete the rows at the same positions of every
 * other partition too.
 *
 * Why ORDER BY start_time: it makes the planner walk the (project_id, start_time) index from its
 * oldest end. Without it, a large project's batch is planned as a sequential scan with LIMIT,
 * which has to step over every row deleted by the earlier batches of the same run (they are dead
 * but not yet vacuumed), so a run's cost grows with the square of its size. `from`, the previous
 * batch's latestStart, starts the walk past the index entries of the spans already deleted
 * (every span before it is gone), instead of stepping over them again in every batch.
 */
export async function deleteOldestSpansBefore(
  db: Executor, partition: string, projectId: string, cutoff: Date, limit: number, from: Date | null = null,
): Promise<SpanDeletion> {
  const table = sql.id(partition)
  const { rows } = await sql<{ deleted: number; latest_start: Date | null }>`
    with deleted as (
      delete from ${table} where ctid = any(array(
        select ctid from ${table}
        where project_id = ${projectId} and start_time < ${cutoff} ${from ? sql`and start_time >= ${from}` : sql``}
        order by start_time limit ${limit}
      ))
      returning start_time)
    select count(*)::int as deleted, max(start_time) as latest_start from deleted`.execute(db)
  const row = rows[0]
  return { deleted: row?.deleted ?? 0, latestStart: row?.latest_start ?? null }
}

/**
 * A stretch of a project's history whose spans are all deleted: from `from` (null: from the
 * beginning) to `to`, exclusive. The janitor's batches delete consecutive windows, each one
 * beginning where the one before ended, so no statement walks the rows an earlier batch deleted.
 */
export interface DeletedWindow {
  from: Date | null
  to: Date
}

/**
 * Deletes what the writer keeps beside the spans (trace and session summaries, usage rollups,
 * full-text search's word filters of blocks)
 * and the scores of those traces and sessions, that only spans of `window` made: the traces that started in it, the sessions whose last trace
 * ended in it, the hours that ended in it. Call it in the transaction that deleted the spans.
 *
 * Each table is cut by a range of its own time index, not by a count: a window's rows are as many
 * as its spans allow (a trace, a session and at most one rollup per dimension and hour need at
 * least one span), and the range is planned by the rows it holds, not by a guess at how many old
 * rows a LIMIT has to wade through.
 */
export async function deleteSummariesOfWindow(db: Executor, projectId: string, window: DeletedWindow): Promise<void> {
  const { from, to } = window
  // A trace's and a session's scores go with them (feedback comments are the user's words too),
  // each looked up through the scores' trace index.
  await sql`
    with gone as (
      delete from trace_summaries
      where project_id = ${projectId} and start_time < ${to} ${from ? sql`and start_time >= ${from}` : sql``}
      returning trace_id)
    delete from scores s using gone where s.project_id = ${projectId} and s.trace_id = gone.trace_id`.execute(db)
  await sql`
    with gone as (
      delete from session_summaries
      where project_id = ${projectId} and last_seen < ${to} ${from ? sql`and last_seen >= ${from}` : sql``}
      returning session_id)
    delete from scores s using gone where s.project_id = ${projectId} and s.trace_id is null and s.session_id = gone.session_id`.execute(db)
  // An hour goes once it has ended: the hour holding `to` keeps its row (some of its spans are
  // kept) until a later window passes its end. The dimensions are listed so that the primary key
  // is walked as one range of hours per dimension.
  const hourBefore = (instant: Date) => new Date(instant.getTime() - 3_600_000)
  await sql`
    delete from usage_rollups
    where project_id = ${projectId} and dimension in ('all', 'model', 'vendor', 'service', 'user', 'tracewell.model', 'tracewell.vendor', 'session', 'prompt', 'tag', 'shape')
      and hour <= ${hourBefore(to)} ${from ? sql`and hour > ${hourBefore(from)}` : sql``}`.execute(db)
  // A day of who was active (migration 2026-12-06T0710) goes, as an hour does, once the window passed the day's end.
  const dayBefore = (instant: Date) => new Date(instant.getTime() - 86_400_000)
  await sql`
    delete from usage_rollups
    where project_id = ${projectId} and dimension in ('user.day', 'session.day')
      and hour <= ${dayBefore(to)} ${from ? sql`and hour > ${dayBefore(from)}` : sql``}`.execute(db)
  // The users and sessions by group of a day (migration 2026-12-07T0100) go once the window passed
  // the day's end; a day cut by the window is built anew from the summaries it keeps.
  await sql`
    delete from group_member_days
    where project_id = ${projectId} and dimension = any(${GROUP_MEMBER_DAY_DIMENSIONS}::text[])
      and day <= ${dayBefore(to)} ${from ? sql`and day > ${dayBefore(from)}` : sql``}`.execute(db)
  await sql`
    delete from group_member_day_marks where project_id = ${projectId} and day <= ${dayBefore(to)} ${from ? sql`and day > ${dayBefore(from)}` : sql``}`.execute(db)
  if (to.getTime() % 86_400_000 !== 0) await sql`select tracewell_unbuild_group_member_day(${projectId}, ${to})`.execute(db)
  // A block of full-text search's word filters goes, as an hour does, once the window passed its end.
  const blockBefore = (instant: Date) => new Date(instant.getTime() - TEXT_BLOCK_MS)
  await sql`
    delete from trace_text_blocks
    where project_id = ${projectId} and block <= ${blockBefore(to)} ${from ? sql`and block > ${blockBefore(from)}` : sql``}`.execute(db)
}
