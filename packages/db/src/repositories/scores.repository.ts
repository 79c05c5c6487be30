import { sql, type RawBuilder, type Selectable } from 'kysely'
import type { ScoreDataType, ScoresTable, ScoreSource } from '../database.ts'
import type { Executor } from './executor.ts'

// Scores on traces, spans and sessions (docs/api.md#scores): user feedback, annotations from the
// console, and LLM judges' evaluations. A score is upserted by (project, id), so a caller that
// resends one (or an evaluator retrying a job) never makes a second row.

export interface ScoreDto {
  id: string
  traceId: string | null
  spanId: string | null
  sessionId: string | null
  name: string
  dataType: ScoreDataType
  /** The number every score has: the value, 1 or 0 for a boolean, the category's value (null when its category has none). */
  numericValue: number | null
  /** The category's label, or 'true' / 'false'; null for a numeric score. */
  stringValue: string | null
  comment: string | null
  source: ScoreSource
  author: string | null
  configId: string | null
  evaluatorId: string | null
  /** The name of the evaluator that gave it (null when none did, or it was deleted since). */
  evaluatorName: string | null
  createdAt: string
  updatedAt: string
}

/** A score as stored: the score as it reads, with its project, less the store's times; the evaluator optional. */
export type ScoreUpsert = Omit<ScoreDto, 'createdAt' | 'updatedAt' | 'evaluatorId' | 'evaluatorName'> & { projectId: string; evaluatorId?: string | null | undefined }

/** A stored score as the queries read it (the project is the caller's), with its evaluator's name (withEvaluatorName). */
type ScoreRow = Omit<Selectable<ScoresTable>, 'project_id'> & { evaluator_name: string | null }

/** A column of `scores`' rows: the evaluator's name, looked up by its primary key (one probe a score that has one). */
const withEvaluatorName = sql`(select e.name from evaluators e where e.id = scores.evaluator_id) as evaluator_name`

export function toScoreDto(row: ScoreRow): ScoreDto {
  return {
    id: row.id,
    traceId: row.trace_id,
    spanId: row.span_id,
    sessionId: row.session_id,
    name: row.name,
    dataType: row.data_type,
    numericValue: row.value,
    stringValue: row.string_value,
    comment: row.comment,
    source: row.source,
    author: row.author,
    configId: row.config_id,
    evaluatorId: row.evaluator_id,
    evaluatorName: row.evaluator_name,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

/** Creates the score, or replaces the one of that id; `created` tells which. The created time of a replaced score stays. */
export async function upsertScore(db: Executor, score: ScoreUpsert): Promise<{ score: ScoreDto; created: boolean }> {
  const { rows } = await sql<ScoreRow & { created: boolean }>`
    insert into scores (project_id, id, trace_id, span_id, session_id, name, data_type, value, string_value, comment, source, author, config_id, evaluator_id)
    values (${score.projectId}, ${score.id}, ${score.traceId}, ${score.spanId}, ${score.sessionId}, ${score.name}, ${score.dataType},
      ${score.numericValue}, ${score.stringValue}, ${score.comment}, ${score.source}, ${score.author}, ${score.configId}, ${score.evaluatorId ?? null})
    on conflict (project_id, id) do update set
      trace_id = excluded.trace_id, span_id = excluded.span_id, session_id = excluded.session_id, name = excluded.name,
      data_type = excluded.data_type, value = excluded.value, string_value = excluded.string_value, comment = excluded.comment,
      source = excluded.source, author = excluded.author, config_id = excluded.config_id, evaluator_id = excluded.evaluator_id, updated_at = now()
    returning *, ${withEvaluatorName}, (xmax = 0) as created`.execute(db)
  const row = rows[0] as ScoreRow & { created: boolean }
  return { score: toScoreDto(row), created: row.created }
}

export interface ScoreSearch {
  projectId: string
  limit: number
  traceId?: string | undefined
  /** Any of these span ids (the Langtrace feedback lookup tries both readings of an ambiguous id). */
  spanIds?: readonly string[] | undefined
  sessionId?: string | undefined
  name?: string | undefined
  source?: ScoreSource | undefined
  from?: Date | undefined
  to?: Date | undefined
  cursor?: { createdAt: string; id: string } | undefined
}

/** Scores newest first, a page at a time. */
export async function listScores(db: Executor, search: ScoreSearch): Promise<{ scores: ScoreDto[]; next: { createdAt: string; id: string } | null }> {
  const where: RawBuilder<unknown>[] = [sql`project_id = ${search.projectId}`]
  if (search.traceId !== undefined) where.push(sql`trace_id = ${search.traceId}`)
  if (search.spanIds !== undefined) where.push(search.spanIds.length === 0 ? sql`false` : sql`span_id in (${sql.join(search.spanIds)})`)
  if (search.sessionId !== undefined) where.push(sql`session_id = ${search.sessionId}`)
  if (search.name !== undefined) where.push(sql`name = ${search.name}`)
  if (search.source !== undefined) where.push(sql`source = ${search.source}`)
  if (search.from) where.push(sql`created_at >= ${search.from}`)
  if (search.to) where.push(sql`created_at < ${search.to}`)
  if (search.cursor) where.push(sql`(created_at, id) < (${search.cursor.createdAt}::timestamptz, ${search.cursor.id})`)
  const { rows } = await sql<ScoreRow & { created_text: string }>`
    select *, ${withEvaluatorName}, created_at::text as created_text from scores where ${sql.join(where, sql` and `)}
    order by created_at desc, id desc limit ${search.limit + 1}`.execute(db)
  const page = rows.slice(0, search.limit)
  const last = page.at(-1)
  return { scores: page.map(toScoreDto), next: rows.length > search.limit && last ? { createdAt: last.created_text, id: last.id } : null }
}

export async function findScore(db: Executor, projectId: string, id: string): Promise<ScoreDto | undefined> {
  const { rows } = await sql<ScoreRow>`select *, ${withEvaluatorName} from scores where project_id = ${projectId} and id = ${id}`.execute(db)
  return rows[0] === undefined ? undefined : toScoreDto(rows[0])
}

/** Whether the score existed in that project (and is now gone). */
export async function deleteScore(db: Executor, projectId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('scores').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The scores of each of these traces, oldest first (what the trace list and one trace show). */
export async function scoresOfTraces(db: Executor, projectId: string, traceIds: readonly string[]): Promise<Map<string, ScoreDto[]>> {
  const byTrace = new Map<string, ScoreDto[]>()
  if (traceIds.length === 0) return byTrace
  const { rows } = await sql<ScoreRow>`
    select *, ${withEvaluatorName} from scores where project_id = ${projectId} and trace_id in (${sql.join(traceIds)})
    order by created_at, id`.execute(db)
  for (const row of rows) {
    const traceId = row.trace_id as string
    const scores = byTrace.get(traceId)
    if (scores === undefined) byTrace.set(traceId, [toScoreDto(row)])
    else scores.push(toScoreDto(row))
  }
  return byTrace
}

export interface ScoreAverage {
  name: string
  average: number
  count: number
}

export interface ScoreAverageQuery {
  projectId: string
  from: Date
  to: Date
  bucket: 'hour' | 'day'
  timeZone: string
}

/**
 * The average of each score's numbers in [from, to) (by when the score was given), in total and
 * per bucket of the time zone. Scores without a number (a category without a value) are left out.
 */
export async function scoreAverages(db: Executor, query: ScoreAverageQuery): Promise<{ totals: ScoreAverage[]; series: Array<ScoreAverage & { bucket: string }> }> {
  const inWindow = sql`project_id = ${query.projectId} and created_at >= ${query.from} and created_at < ${query.to} and value is not null`
  const [totals, series] = await Promise.all([
    sql<{ name: string; average: number; count: string }>`
      select name, avg(value) as average, count(*)::text as count from scores where ${inWindow} group by name order by name`.execute(db),
    sql<{ bucket_us: string; name: string; average: number; count: string }>`
      select (extract(epoch from date_trunc(${query.bucket}, created_at at time zone ${query.timeZone}) at time zone ${query.timeZone}) * 1000000)::bigint::text as bucket_us,
        name, avg(value) as average, count(*)::text as count
      from scores where ${inWindow} group by 1, 2`.execute(db),
  ])
  return {
    totals: totals.rows.map((row) => ({ name: row.name, average: Number(row.average), count: Number(row.count) })),
    series: series.rows
      .sort((a, b) => Number(BigInt(a.bucket_us) - BigInt(b.bucket_us)) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((row) => ({
      bucket: new Date(Number(BigInt(row.bucket_us) / 1000n)).toISOString(),
      name: row.name,
      average: Number(row.average),
      count: Number(row.count),
    })),
  }
}

/** Which of these (trace, span) pairs are stored spans of the project (how an ambiguous Langtrace id is read). */
export async function storedSpanPairs(db: Executor, projectId: string, pairs: ReadonlyArray<{ traceId: string; spanId: string }>): Promise<Array<{ traceId: string; spanId: string }>> {
  if (pairs.length === 0) return []
  const { rows } = await sql<{ trace_id: string; span_id: string }>`
    select trace_id, span_id from spans
    where project_id = ${projectId} and (trace_id, span_id) in (${sql.join(pairs.map((pair) => sql`(${pair.traceId}, ${pair.spanId})`))})`.execute(db)
  return rows.map((row) => ({ traceId: row.trace_id, spanId: row.span_id }))
}
