import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { bucketOf, type RollupCell, type RollupRead } from './metric-rollups.ts'

// Distinct sessions in each point (issue 45 §3: a month's sessions line, 250,000 session rows in
// bench:dashboards) without sorting them: a session has a row an hour (or day) it was active in, so
// a point's rows are its sessions plus, for each session with rows in several of the point's hours
// or days, those rows but one. Only a session whose row in session_figures spans more than an hour
// can have those (its bounds hold all its rows), and such sessions are few (294 of the month's
// 250,000 there): their rows are read again, by key, to count what to take off.

/**
 * The cells of `sessions` over the read's window: `rows` is every session row of the window that
 * counts (hour, value), `rowsOf(only)` the same rows meeting the condition `only` as well.
 */
export async function sessionCountCells(
  db: Executor, read: RollupRead, rows: RawBuilder<unknown>, rowsOf: (only: RawBuilder<unknown>) => RawBuilder<unknown>,
): Promise<RollupCell[]> {
  const bucket = bucketOf(read.startMs, read.granularitySeconds)
  // Through the index on the sessions' lengths (project_id, last_hour - first_hour): the condition on
  // first_hour is written so that its own index cannot take it. In the rows' collation, so that
  // `value = any(…)` is a condition of their index (session-ranking.ts says why).
  const spanning = sql`array(
    select session_id collate "default" from session_figures
    where project_id = ${read.projectId} and last_hour - first_hour > interval '0' and last_hour >= ${new Date(read.startMs)}
      and first_hour + interval '0' < ${read.to})`
  const { rows: cells } = await sql<{ bucket: number; value: number }>`
    with counted as (select ${bucket} as bucket, count(*) as n from (${rows}) r group by 1),
    repeated as (
      select bucket, sum(n - 1) as n from (
        select ${bucket} as bucket, value, count(*) as n from (${rowsOf(sql` and value = any(${spanning})`)}) r group by 1, 2 having count(*) > 1
      ) s group by 1
    )
    select c.bucket, (c.n - coalesce(d.n, 0))::float8 as value from counted c left join repeated d using (bucket)`.execute(db)
  return cells.map((cell) => ({ bucket: cell.bucket, group: null, value: cell.value }))
}
