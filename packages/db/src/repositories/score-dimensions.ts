import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'

// score_dimensions (migration 2026-12-06T2200): a row a score with a value, with its trace's
// dimensions as its summary holds them, so that score_avg by a group of the trace, or with a
// filter of those, reads the window's scores alone (metric-series.repository.ts), not a summary
// looked up per score. Triggers on scores write a score's own fields, its trace's dimensions
// unknown (`summarised` false); the fold keeps the dimensions here, under its lock. The same for
// finished judgments in judgment_dimensions (judge_failure_rate's rows).

/** The dimensions a row copies from its trace's summary, as trace_summaries names them. */
export const SCORE_TRACE_DIMENSIONS = ['service_name', 'models', 'response_models', 'vendors', 'services', 'prompts', 'tags', 'user_id', 'session_id'] as const

/** The filters of the trace list (trace-filter-params.ts) that read only those dimensions. */
export const SCORE_DIMENSION_FILTERS: ReadonlySet<string> = new Set(['service', 'model', 'vendor', 'session', 'user'])

const copiedFrom = (alias: string): RawBuilder<unknown> =>
  sql.join(SCORE_TRACE_DIMENSIONS.map((column) => sql`${sql.id(column)} = ${sql.ref(`${alias}.${column}`)}`))

/**
 * The tables of rows holding a copy of their trace's dimensions, by their key: a score's
 * (score_dimensions) and a finished judgment's (judgment_dimensions, migration 2026-12-07T0110).
 */
const DIMENSION_COPIES = [{ table: 'score_dimensions', key: 'score_id' }, { table: 'judgment_dimensions', key: 'job_id' }] as const

/**
 * In the fold's transaction, after it wrote today's summaries: the traces' dimensions onto their
 * scores' and judgments' rows, for `changed` (stored traces whose dimensions the fold changed) and
 * for every row whose dimensions are still unknown (a score that came before its trace or since
 * the last fold): looked up once in every day partition (then `sought`), afterwards in today's
 * only, where the fold writes every trace it folds. Whether rows wait is asked first, from empty
 * index ranges: the lookup in every day partition is planned only for a table with rows waiting
 * (its plan, over every day partition twice, took 7–9 ms to make at load 10, a fold's price
 * whatever its traces).
 */
export async function keepTraceDimensionCopies(trx: Executor, today: string, changed: ReadonlyArray<{ project_id: string; trace_id: string }>): Promise<void> {
  const day = sql`${today}::date`
  // A row sought in vain is looked for again only until the end of the day after its own: a row
  // of a trace that never comes (another project's, sampled out) would otherwise cost every fold
  // this statement for good. Later, its trace is read through the summaries' join as any unknown
  // row's is, so the figures stay right either way.
  const stillSought = sql`d.created_at >= (${day} - 1)::timestamp at time zone 'UTC'`
  const { rows: [waiting] } = await sql<Record<string, boolean>>`select ${sql.join(DIMENSION_COPIES.map(({ table }) =>
    sql`exists (select 1 from ${sql.table(table)} d where not d.summarised and (not d.sought or ${stillSought})) as ${sql.id(table)}`))}`.execute(trx)
  const parts = DIMENSION_COPIES.flatMap(({ table, key }) => {
    const rows = sql`${sql.table(table)} d`
    const ofChanged = sql`
      update ${rows} set ${copiedFrom('t')}
      from unnest(${changed.map((trace) => trace.project_id)}::text[], ${changed.map((trace) => trace.trace_id)}::text[]) as k(project_id, trace_id),
        lateral (select * from trace_summaries t where t.project_id = k.project_id and t.trace_id = k.trace_id and t.fold_day = ${day}) as t
      where d.project_id = k.project_id and d.trace_id = k.trace_id and d.summarised
      returning 1`
    const sought = sql`
      update ${rows} set summarised = true, ${copiedFrom('t')}
      from trace_summaries t
      where not d.summarised and d.sought and ${stillSought} and t.project_id = d.project_id and t.trace_id = d.trace_id and t.fold_day = ${day}
      returning 1`
    const unsought = sql`
      update ${rows} set summarised = f.found, sought = true, ${copiedFrom('f')}
      from (
        select p.project_id as of_project, p.${sql.id(key)} as of_key, t.trace_id is not null as found, t.*
        from ${sql.table(table)} p
        left join lateral (${traceSummaryOf('p')}) t on true
        where not p.summarised and not p.sought
      ) f
      where d.project_id = f.of_project and d.${sql.id(key)} = f.of_key
      returning 1`
    return [...(changed.length > 0 ? [ofChanged] : []), ...(waiting?.[table] === true ? [sought, unsought] : [])]
  })
  if (parts.length === 0) return
  const names = parts.map((_, i) => sql.id(`part_${i}`))
  await sql`
    with ${sql.join(parts.map((part, i) => sql`${names[i]} as (${part})`))}
    select ${sql.join(names.map((name) => sql`(select count(*) from ${name})`), sql` + `)} as n`.execute(trx)
}

/**
 * The summary of a row's trace (none when not summarised), looked up first in the fold days of the
 * row's creation day and the day before (a trace is summarised before it is scored or judged,
 * mostly within the day), then in all: by key alone each lookup walked the 35 day partitions in
 * turn until its own (740,000 probes for a month's 42,000 scores of bench:dashboards' project).
 */
export function traceSummaryOf(alias: string): RawBuilder<unknown> {
  const key = sql`t0.project_id = ${sql.ref(`${alias}.project_id`)} and t0.trace_id = ${sql.ref(`${alias}.trace_id`)}`
  const created = sql`(${sql.ref(`${alias}.created_at`)} at time zone 'UTC')::date`
  // Append runs its parts in order and the limit stops it at the first row: the second only when the first finds none.
  return sql`select * from (
      (select t0.* from trace_summaries t0 where ${key} and t0.fold_day <= ${created} and t0.fold_day >= ${created} - 1 limit 1)
      union all (select t0.* from trace_summaries t0 where ${key} limit 1)
    ) t1 limit 1`
}
