import { SCORE_TRACE_DIMENSIONS, sql, type Executor } from '@tracewell/db'

/**
 * The rows of score_dimensions (migration 2026-12-06T2200) that differ from the scores and their
 * traces' summaries (summaryMismatches): a row for every score with a value and no other, with its
 * name, time, value and trace; and a row whose trace's dimensions are known (`summarised`) holding
 * its summary's, all null for a score without a trace. A row still unknown is read through the
 * summaries' join, and is right whatever it holds.
 */
export async function scoreDimensionMismatches(db: Executor, projectId: string): Promise<number> {
  const dimensions = (alias: string) => sql.join(SCORE_TRACE_DIMENSIONS.map((column) => sql.ref(`${alias}.${column}`)))
  const { rows } = await sql<{ n: number }>`
    with expected as (
      select s.id, s.name, s.created_at, s.value, s.trace_id, t.trace_id is not null as found, ${dimensions('t')}
      from scores s left join lateral (select * from trace_summaries t0 where t0.project_id = s.project_id and t0.trace_id = s.trace_id limit 1) t on true
      where s.project_id = ${projectId} and s.value is not null
    ),
    stored as (select * from score_dimensions where project_id = ${projectId})
    select count(*)::integer as n from expected e full join stored d on d.score_id = e.id
    where e.id is null or d.score_id is null
      or (e.name, e.created_at, e.value, e.trace_id) is distinct from (d.name, d.created_at, d.value, d.trace_id)
      or (d.summarised and ((e.trace_id is not null and not e.found) or (${dimensions('e')}) is distinct from (${dimensions('d')})))`.execute(db)
  return rows[0]?.n ?? -1
}
