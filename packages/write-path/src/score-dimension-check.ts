import { SCORE_TRACE_DIMENSIONS, sql, type Executor } from '@tracewell/db'

/**
 * The rows of score_dimensions (migration 2026-12-06T2200) and judgment_dimensions (2026-12-07T0110)
 * that differ from the scores, the finished judgments and their traces' summaries
 * (summaryMismatches): a row for every score with a value, and for every completed or failed
 * judgment, and no other, with its own fields and trace; and a row whose trace's dimensions are
 * known (`summarised`) holding its summary's, all null for a score without a trace. A row still
 * unknown is read through the summaries' join, and is right whatever it holds.
 */
export async function scoreDimensionMismatches(db: Executor, projectId: string): Promise<number> {
  const scores = await copyMismatches(db, {
    expected: sql`select s.id as key, s.trace_id, (s.name, s.created_at, s.value) as own, s.project_id from scores s where s.project_id = ${projectId} and s.value is not null`,
    stored: sql`select d.*, d.score_id as key, (d.name, d.created_at, d.value) as own from score_dimensions d where d.project_id = ${projectId}`,
  })
  const judgments = await copyMismatches(db, {
    expected: sql`select j.id as key, j.trace_id, (j.created_at, j.updated_at, j.status = 'failed') as own, j.project_id
      from evaluation_jobs j where j.project_id = ${projectId} and j.status in ('completed', 'failed')`,
    stored: sql`select d.*, d.job_id as key, (d.created_at, d.finished_at, d.failed) as own from judgment_dimensions d where d.project_id = ${projectId}`,
  })
  return scores + judgments
}

/**
 * The mismatches between `expected` (key, trace_id, own: a row of the fields copied, project_id)
 * and `stored` (a table's rows with key and own alike).
 */
async function copyMismatches(db: Executor, rows: { expected: ReturnType<typeof sql>; stored: ReturnType<typeof sql> }): Promise<number> {
  const dimensions = (alias: string) => sql.join(SCORE_TRACE_DIMENSIONS.map((column) => sql.ref(`${alias}.${column}`)))
  const { rows: [mismatches] } = await sql<{ n: number }>`
    with expected as (
      select e.key, e.trace_id, e.own, t.trace_id is not null as found, ${dimensions('t')}
      from (${rows.expected}) e
      left join lateral (select * from trace_summaries t0 where t0.project_id = e.project_id and t0.trace_id = e.trace_id limit 1) t on true
    ),
    stored as (${rows.stored})
    select count(*)::integer as n from expected e full join stored d on d.key = e.key
    where e.key is null or d.key is null
      or (e.own, e.trace_id) is distinct from (d.own, d.trace_id)
      or (d.summarised and ((e.trace_id is not null and not e.found) or (${dimensions('e')}) is distinct from (${dimensions('d')})))`.execute(db)
  return mismatches?.n ?? -1
}
