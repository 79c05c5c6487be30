import { sql } from 'kysely'
import type { EvaluatorRunStatus } from '../database.ts'
import type { Executor } from './executor.ts'
import type { TraceFilterParams } from './trace-filter-params.ts'

// Evaluators (LLM judges of a project's traces) and their on-demand runs. What each judgment did
// is in evaluation_jobs (judgments.repository.ts); an evaluator's figures are summed from there.

export interface EvaluatorDto {
  id: string
  projectId: string
  name: string
  connectionId: string
  model: string
  /** The template over {{input}} and {{output}}; null when a promptset prompt is used. */
  prompt: string | null
  /** A promptset (by name) and the label whose version is the template. */
  promptRef: { name: string; label: string } | null
  scoreName: string
  filter: TraceFilterParams
  samplingRate: number
  enabled: boolean
  /** Traces it scores below `below` go to this annotation queue; null: none do. */
  reviewQueue: { queueId: string; below: number } | null
  createdAt: string
  updatedAt: string
}

export interface EvaluatorStats {
  pending: number
  completed: number
  failed: number
  skipped: number
  inputTokens: number
  outputTokens: number
  /** USD of the judge calls that could be priced; null when none could. */
  costUsd: number | null
}

export interface NewEvaluator {
  projectId: string
  name: string
  connectionId: string
  model: string
  prompt: string | null
  promptRef: { name: string; label: string } | null
  scoreName: string
  filter: TraceFilterParams
  samplingRate: number
  reviewQueue?: { queueId: string; below: number } | null
}

/** Postgres's unique_violation for a second evaluator of one name in a project. */
export const EVALUATOR_EXISTS = 'evaluators_name_unique'

interface Row {
  id: string
  project_id: string
  name: string
  connection_id: string
  model: string
  prompt: string | null
  prompt_name: string | null
  prompt_label: string | null
  score_name: string
  filter: TraceFilterParams
  sampling_rate: number
  enabled: boolean
  created_at: Date
  updated_at: Date
  review_queue_id: string | null
  review_below: number | null
}

function toDto(row: Row): EvaluatorDto {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    connectionId: row.connection_id,
    model: row.model,
    prompt: row.prompt,
    promptRef: row.prompt_name === null ? null : { name: row.prompt_name, label: row.prompt_label ?? 'production' },
    scoreName: row.score_name,
    filter: row.filter,
    samplingRate: row.sampling_rate,
    enabled: row.enabled,
    reviewQueue: row.review_queue_id === null || row.review_below === null ? null : { queueId: row.review_queue_id, below: row.review_below },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export async function createEvaluator(db: Executor, evaluator: NewEvaluator): Promise<EvaluatorDto> {
  const row = await db
    .insertInto('evaluators')
    .values({
      project_id: evaluator.projectId,
      name: evaluator.name,
      connection_id: evaluator.connectionId,
      model: evaluator.model,
      prompt: evaluator.prompt,
      prompt_name: evaluator.promptRef?.name ?? null,
      prompt_label: evaluator.promptRef?.label ?? null,
      score_name: evaluator.scoreName,
      filter: JSON.stringify(evaluator.filter),
      sampling_rate: evaluator.samplingRate,
      review_queue_id: evaluator.reviewQueue?.queueId ?? null,
      review_below: evaluator.reviewQueue?.below ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toDto(row as unknown as Row)
}

export async function listEvaluators(db: Executor, projectId: string): Promise<EvaluatorDto[]> {
  const rows = await db.selectFrom('evaluators').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
  return rows.map((row) => toDto(row as unknown as Row))
}

export async function findEvaluator(db: Executor, projectId: string, id: string): Promise<EvaluatorDto | undefined> {
  const row = await db.selectFrom('evaluators').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toDto(row as unknown as Row)
}

/** Every enabled evaluator of every project: what the worker judges new traces with. */
export async function listEnabledEvaluators(db: Executor): Promise<EvaluatorDto[]> {
  const rows = await db.selectFrom('evaluators').selectAll().where('enabled', '=', true).orderBy('created_at').execute()
  return rows.map((row) => toDto(row as unknown as Row))
}

export async function findEvaluatorById(db: Executor, id: string): Promise<EvaluatorDto | undefined> {
  const row = await db.selectFrom('evaluators').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toDto(row as unknown as Row)
}

/** Turns judging new traces on or off; undefined when the evaluator is not the project's. */
export async function setEvaluatorEnabled(db: Executor, projectId: string, id: string, enabled: boolean): Promise<EvaluatorDto | undefined> {
  const row = await db
    .updateTable('evaluators')
    .set({ enabled, updated_at: sql<Date>`now()` })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row === undefined ? undefined : toDto(row as unknown as Row)
}

/** Deletes the evaluator with its runs and judgments; the scores it gave stay. */
export async function deleteEvaluator(db: Executor, projectId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('evaluators').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Each evaluator's judgments by status, and the judge's tokens and cost in total. */
export async function evaluatorStats(db: Executor, evaluatorIds: readonly string[]): Promise<Map<string, EvaluatorStats>> {
  const stats = new Map<string, EvaluatorStats>()
  for (const id of evaluatorIds) stats.set(id, { pending: 0, completed: 0, failed: 0, skipped: 0, inputTokens: 0, outputTokens: 0, costUsd: null })
  if (evaluatorIds.length === 0) return stats
  const { rows } = await sql<{ evaluator_id: string; status: keyof EvaluatorStats; n: string; input: string | null; output: string | null; cost: string | null }>`
    select evaluator_id, status, count(*)::text as n, sum(input_tokens)::text as input, sum(output_tokens)::text as output, sum(cost_usd)::text as cost
    from evaluation_jobs where evaluator_id in (${sql.join(evaluatorIds)}) group by 1, 2`.execute(db)
  for (const row of rows) {
    const entry = stats.get(row.evaluator_id) as EvaluatorStats
    ;(entry[row.status] as number) = Number(row.n)
    entry.inputTokens += Number(row.input ?? 0)
    entry.outputTokens += Number(row.output ?? 0)
    if (row.cost !== null) entry.costUsd = (entry.costUsd ?? 0) + Number(row.cost)
  }
  return stats
}

export interface EvaluatorRunDto {
  id: string
  evaluatorId: string
  from: string
  to: string
  status: EvaluatorRunStatus
  /** The traces the run judges, known once it has started. */
  traceCount: number | null
  judgments: { pending: number; completed: number; failed: number; skipped: number }
  createdAt: string
  finishedAt: string | null
}

interface RunRow {
  id: string
  evaluator_id: string
  from_time: Date
  to_time: Date
  status: EvaluatorRunStatus
  trace_count: number | null
  created_at: Date
  finished_at: Date | null
}

export async function createEvaluatorRun(db: Executor, run: { projectId: string; evaluatorId: string; from: Date; to: Date }): Promise<EvaluatorRunDto> {
  const row = await db
    .insertInto('evaluation_runs')
    .values({ project_id: run.projectId, evaluator_id: run.evaluatorId, from_time: run.from, to_time: run.to })
    .returningAll()
    .executeTakeFirstOrThrow()
  return (await withJudgments(db, [row as unknown as RunRow]))[0] as EvaluatorRunDto
}

export async function findEvaluatorRun(db: Executor, projectId: string, evaluatorId: string, runId: string): Promise<EvaluatorRunDto | undefined> {
  const row = await db
    .selectFrom('evaluation_runs')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('evaluator_id', '=', evaluatorId)
    .where('id', '=', runId)
    .executeTakeFirst()
  return row === undefined ? undefined : (await withJudgments(db, [row as unknown as RunRow]))[0]
}

export async function listEvaluatorRuns(db: Executor, projectId: string, evaluatorId: string): Promise<EvaluatorRunDto[]> {
  const rows = await db
    .selectFrom('evaluation_runs')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('evaluator_id', '=', evaluatorId)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute()
  return withJudgments(db, rows as unknown as RunRow[])
}

async function withJudgments(db: Executor, rows: RunRow[]): Promise<EvaluatorRunDto[]> {
  const counts = new Map<string, EvaluatorRunDto['judgments']>()
  for (const row of rows) counts.set(row.id, { pending: 0, completed: 0, failed: 0, skipped: 0 })
  if (rows.length > 0) {
    const { rows: found } = await sql<{ run_id: string; status: 'pending' | 'completed' | 'failed' | 'skipped'; n: string }>`
      select run_id, status, count(*)::text as n from evaluation_jobs where run_id in (${sql.join(rows.map((row) => row.id))}) group by 1, 2`.execute(db)
    for (const row of found) (counts.get(row.run_id) as EvaluatorRunDto['judgments'])[row.status] = Number(row.n)
  }
  return rows.map((row) => ({
    id: row.id,
    evaluatorId: row.evaluator_id,
    from: row.from_time.toISOString(),
    to: row.to_time.toISOString(),
    status: row.status,
    traceCount: row.trace_count,
    judgments: counts.get(row.id) as EvaluatorRunDto['judgments'],
    createdAt: row.created_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
  }))
}
