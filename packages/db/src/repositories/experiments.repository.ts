import { sql } from 'kysely'
import type { ExperimentKind, ExperimentResultStatus, ExperimentStatus } from '../database.ts'
import { spendAssignments, type CallSpend } from './call-spend.ts'
import { inTransaction, type Executor } from './executor.ts'
import { addRowSpend, completeFinishedBatches, experimentResultRows, recordRowAttempt, recordRowError, stalePendingRows } from './job-rows.repository.ts'
import type { QueuedRow } from './queued-row.ts'

// Experiments over dataset versions and their results, one per item. A prompt experiment's
// results are created pending with the experiment, in one transaction; the evaluator worker's
// scheduler starts queued experiments (their pending results go onto the queue) and completes
// them once no result is pending. An SDK experiment (kind sdk, status external) gets its results
// from the caller, each linking one of its traces to an item.

export interface ExperimentDto {
  id: string
  projectId: string
  datasetId: string
  datasetVersion: number
  name: string
  description: string
  metadata: Record<string, unknown>
  kind: ExperimentKind
  promptsetId: string | null
  promptVersion: number | null
  connectionId: string | null
  model: string | null
  modelSettings: Record<string, unknown>
  evaluatorIds: string[]
  status: ExperimentStatus
  itemCount: number
  createdAt: string
  finishedAt: string | null
}

export interface ExperimentResultDto {
  id: string
  experimentId: string
  datasetItemId: string
  status: ExperimentResultStatus
  attempts: number
  error: string | null
  output: unknown
  traceId: string | null
  spanId: string | null
  model: string | null
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number | null
  createdAt: string
  updatedAt: string
}

/** What creating an experiment takes: the experiment as it reads, less what the store decides. */
export type NewExperiment = Omit<ExperimentDto, 'id' | 'status' | 'itemCount' | 'createdAt' | 'finishedAt'>

interface ExperimentRow {
  id: string
  project_id: string
  dataset_id: string
  dataset_version: number
  name: string
  description: string
  metadata: Record<string, unknown>
  kind: ExperimentKind
  promptset_id: string | null
  prompt_version: number | null
  connection_id: string | null
  model: string | null
  model_settings: Record<string, unknown>
  evaluator_ids: string[]
  status: ExperimentStatus
  item_count: number
  created_at: Date
  finished_at: Date | null
}

const toExperiment = (row: ExperimentRow): ExperimentDto => ({
  id: row.id,
  projectId: row.project_id,
  datasetId: row.dataset_id,
  datasetVersion: row.dataset_version,
  name: row.name,
  description: row.description,
  metadata: row.metadata,
  kind: row.kind,
  promptsetId: row.promptset_id,
  promptVersion: row.prompt_version,
  connectionId: row.connection_id,
  model: row.model,
  modelSettings: row.model_settings,
  evaluatorIds: row.evaluator_ids,
  status: row.status,
  itemCount: row.item_count,
  createdAt: row.created_at.toISOString(),
  finishedAt: row.finished_at?.toISOString() ?? null,
})

interface ResultRow {
  id: string
  experiment_id: string
  dataset_item_id: string
  status: ExperimentResultStatus
  attempts: number
  error: string | null
  output: unknown
  trace_id: string | null
  span_id: string | null
  model: string | null
  input_tokens: number | null
  output_tokens: number | null
  cost_usd: string | null
  latency_ms: number | null
  created_at: Date
  updated_at: Date
}

const toResult = (row: ResultRow): ExperimentResultDto => ({
  id: row.id,
  experimentId: row.experiment_id,
  datasetItemId: row.dataset_item_id,
  status: row.status,
  attempts: row.attempts,
  error: row.error,
  output: row.output ?? null,
  traceId: row.trace_id,
  spanId: row.span_id,
  model: row.model,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
  latencyMs: row.latency_ms,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
})

/** Creates the experiment; a prompt experiment with one pending result per item of its dataset version. */
export async function createExperiment(db: Executor, experiment: NewExperiment, itemIds: readonly string[]): Promise<ExperimentDto> {
  return inTransaction(db, async (trx) => {
    const row = await trx
      .insertInto('experiments')
      .values({
        project_id: experiment.projectId,
        dataset_id: experiment.datasetId,
        dataset_version: experiment.datasetVersion,
        name: experiment.name,
        description: experiment.description,
        metadata: JSON.stringify(experiment.metadata),
        kind: experiment.kind,
        promptset_id: experiment.promptsetId,
        prompt_version: experiment.promptVersion,
        connection_id: experiment.connectionId,
        model: experiment.model,
        model_settings: JSON.stringify(experiment.modelSettings),
        evaluator_ids: JSON.stringify(experiment.evaluatorIds),
        status: experiment.kind === 'sdk' ? 'external' : 'queued',
        item_count: itemIds.length,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    if (experiment.kind === 'prompt') {
      for (let start = 0; start < itemIds.length; start += 1_000) {
        await trx
          .insertInto('experiment_results')
          .values(itemIds.slice(start, start + 1_000).map((itemId) => ({ project_id: experiment.projectId, experiment_id: row.id, dataset_item_id: itemId })))
          .execute()
      }
    }
    return toExperiment(row)
  })
}

export async function findExperiment(db: Executor, projectId: string, id: string): Promise<ExperimentDto | undefined> {
  const row = await db.selectFrom('experiments').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toExperiment(row)
}

export async function findExperimentById(db: Executor, id: string): Promise<ExperimentDto | undefined> {
  const row = await db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toExperiment(row)
}

/** The project's experiments (of one dataset, when given), newest first, at most 500. */
export async function listExperiments(db: Executor, projectId: string, datasetId?: string): Promise<ExperimentDto[]> {
  let query = db.selectFrom('experiments').selectAll().where('project_id', '=', projectId)
  if (datasetId !== undefined) query = query.where('dataset_id', '=', datasetId)
  const rows = await query.orderBy('created_at', 'desc').orderBy('id').limit(500).execute()
  return rows.map(toExperiment)
}

/**
 * Figures a result has not recorded itself (an SDK experiment's, linked to the caller's trace) are
 * its trace's, from the trace summary once the trace has arrived: its duration, tokens and cost.
 */
const resultsWithTraceFigures = (experimentIds: readonly string[]) => sql<ResultRow>`
  select r.id, r.experiment_id, r.dataset_item_id, r.status, r.attempts, r.error, r.output, r.trace_id, r.span_id,
    coalesce(r.model, (select t.models[1] from trace_summaries t where t.project_id = r.project_id and t.trace_id = r.trace_id)) as model,
    coalesce(r.input_tokens, (select t.input_tokens from trace_summaries t where t.project_id = r.project_id and t.trace_id = r.trace_id))::integer as input_tokens,
    coalesce(r.output_tokens, (select t.output_tokens from trace_summaries t where t.project_id = r.project_id and t.trace_id = r.trace_id))::integer as output_tokens,
    coalesce(r.cost_usd, (select t.cost_usd from trace_summaries t where t.project_id = r.project_id and t.trace_id = r.trace_id)) as cost_usd,
    coalesce(r.latency_ms, (select round(t.duration_us / 1000.0) from trace_summaries t where t.project_id = r.project_id and t.trace_id = r.trace_id))::integer as latency_ms,
    r.created_at, r.updated_at
  from experiment_results r
  where r.experiment_id in (${sql.join(experimentIds)})`

export async function listExperimentResults(db: Executor, experimentId: string): Promise<ExperimentResultDto[]> {
  const { rows } = await sql<ResultRow>`select * from (${resultsWithTraceFigures([experimentId])}) r order by r.created_at, r.id`.execute(db)
  return rows.map(toResult)
}

export interface ExperimentAggregates {
  results: { total: number; pending: number; completed: number; failed: number }
  latencyMs: { avg: number | null; p50: number | null; p95: number | null }
  inputTokens: number
  outputTokens: number
  /** USD of the results whose cost is known; null when none is. */
  costUsd: number | null
  scores: Array<{ name: string; avg: number | null; count: number }>
}

/** Each experiment's figures: results by status, latency, tokens, cost, and its scores averaged by name. */
export async function experimentAggregates(db: Executor, experimentIds: readonly string[]): Promise<Map<string, ExperimentAggregates>> {
  const aggregates = new Map<string, ExperimentAggregates>()
  if (experimentIds.length === 0) return aggregates
  const { rows } = await sql<{
    experiment_id: string; total: string; pending: string; completed: string; failed: string; avg_latency: number | null; p50: number | null; p95: number | null
    input_tokens: string | null; output_tokens: string | null; cost_usd: string | null
  }>`
    select r.experiment_id, count(*) as total,
      count(*) filter (where r.status = 'pending') as pending,
      count(*) filter (where r.status = 'completed') as completed,
      count(*) filter (where r.status = 'failed') as failed,
      avg(r.latency_ms) filter (where r.status = 'completed')::float8 as avg_latency,
      percentile_cont(0.5) within group (order by r.latency_ms) filter (where r.status = 'completed') as p50,
      percentile_cont(0.95) within group (order by r.latency_ms) filter (where r.status = 'completed') as p95,
      sum(r.input_tokens) as input_tokens, sum(r.output_tokens) as output_tokens, sum(r.cost_usd) as cost_usd
    from (${resultsWithTraceFigures(experimentIds)}) r
    group by r.experiment_id`.execute(db)
  for (const row of rows) {
    aggregates.set(row.experiment_id, {
      results: { total: Number(row.total), pending: Number(row.pending), completed: Number(row.completed), failed: Number(row.failed) },
      latencyMs: { avg: row.avg_latency === null ? null : Math.round(row.avg_latency), p50: row.p50, p95: row.p95 },
      inputTokens: Number(row.input_tokens ?? 0),
      outputTokens: Number(row.output_tokens ?? 0),
      costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
      scores: [],
    })
  }
  const { rows: scoreRows } = await sql<{ experiment_id: string; name: string; avg: number | null; count: string }>`
    select r.experiment_id, s.name, avg(s.value)::float8 as avg, count(*) as count
    from experiment_results r join scores s on s.project_id = r.project_id and s.trace_id = r.trace_id and s.span_id is null
    where r.experiment_id in (${sql.join(experimentIds)})
    group by r.experiment_id, s.name order by s.name`.execute(db)
  for (const row of scoreRows) aggregates.get(row.experiment_id)?.scores.push({ name: row.name, avg: row.avg, count: Number(row.count) })
  return aggregates
}

export interface ExperimentResultScore {
  resultId: string
  name: string
  value: number | null
  stringValue: string | null
  comment: string | null
  source: string
}

/** The scores on the results' traces (what evaluators, annotators and SDKs said about each output). */
export async function listExperimentScores(db: Executor, experimentId: string): Promise<ExperimentResultScore[]> {
  const { rows } = await sql<{ result_id: string; name: string; value: number | null; string_value: string | null; comment: string | null; source: string }>`
    select r.id as result_id, s.name, s.value, s.string_value, s.comment, s.source
    from experiment_results r join scores s on s.project_id = r.project_id and s.trace_id = r.trace_id and s.span_id is null
    where r.experiment_id = ${experimentId}
    order by r.id, s.name`.execute(db)
  return rows.map((row) => ({ resultId: row.result_id, name: row.name, value: row.value, stringValue: row.string_value, comment: row.comment, source: row.source }))
}

/** One result with what running it needs to know of its experiment. */
export async function findExperimentResult(db: Executor, id: string): Promise<ExperimentResultDto | undefined> {
  const row = await db.selectFrom('experiment_results').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toResult(row)
}

/** Starts queued experiments; answers their pending results' ids, for the queue. */
export async function startQueuedExperiments(db: Executor): Promise<QueuedRow[]> {
  const { rows } = await sql<{ id: string; project_id: string }>`
    with started as (
      update experiments set status = 'running' where status = 'queued' returning id, project_id
    )
    select r.id, started.project_id from experiment_results r join started on started.id = r.experiment_id where r.status = 'pending' order by r.created_at`.execute(db)
  return rows.map((row) => ({ jobId: row.id, projectId: row.project_id }))
}

/** Marks running experiments whose results are all done as completed. */
export const completeFinishedExperiments = (db: Executor): Promise<void> => completeFinishedBatches(db, experimentResultRows)

/** Pending results of running experiments untouched this long: their queue job may have been lost. */
export const stalePendingResults = (db: Executor, olderThanMs: number, limit: number): Promise<QueuedRow[]> => stalePendingRows(db, experimentResultRows, olderThanMs, limit)

/** Counts an attempt at a result; its number (1 for the first). */
export async function recordResultAttempt(db: Executor, id: string): Promise<number> {
  return (await recordRowAttempt(db, experimentResultRows, id)) ?? 1
}

export interface ResultOutcome {
  output: unknown
  traceId: string
  spanId: string | null
  model: string | null
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number | null
}

/** Completes a result; its call's tokens and cost are added to those of the attempts before it (addResultSpend). */
export async function completeResult(db: Executor, id: string, outcome: ResultOutcome): Promise<void> {
  await sql`
    update experiment_results set status = 'completed', error = null, output = ${JSON.stringify(outcome.output ?? null)}::jsonb, trace_id = ${outcome.traceId},
      span_id = ${outcome.spanId}, model = ${outcome.model}, latency_ms = ${outcome.latencyMs}, ${spendAssignments(outcome)}, updated_at = now()
    where id = ${id}`.execute(db)
}

/** Adds an attempt's model call to a result's tokens and cost, whether the attempt succeeds or not. */
export const addResultSpend = (db: Executor, id: string, spend: CallSpend): Promise<void> => addRowSpend(db, experimentResultRows, id, spend)

/** Records a failed attempt's error; `final` marks the result failed (no attempt is left), with the trace of the failed call when there is one. */
export const recordResultError = (db: Executor, id: string, error: string, final: boolean, traceId: string | null = null): Promise<void> =>
  recordRowError(db, experimentResultRows, id, error, final, traceId)

/** An SDK experiment's result for one item: linked to the caller's trace, replacing an earlier one for the item. */
export async function upsertExternalResult(db: Executor, projectId: string, experimentId: string, itemId: string, outcome: ResultOutcome): Promise<ExperimentResultDto> {
  const values = {
    status: 'completed' as const,
    output: JSON.stringify(outcome.output ?? null),
    trace_id: outcome.traceId,
    span_id: outcome.spanId,
    model: outcome.model,
    input_tokens: outcome.inputTokens,
    output_tokens: outcome.outputTokens,
    cost_usd: outcome.costUsd,
    latency_ms: outcome.latencyMs,
  }
  const row = await db
    .insertInto('experiment_results')
    .values({ project_id: projectId, experiment_id: experimentId, dataset_item_id: itemId, attempts: 1, ...values })
    .onConflict((oc) => oc.constraint('experiment_results_item_unique').doUpdateSet({ ...values, updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow()
  return toResult(row)
}

/** Deletes an experiment and its results (their traces and scores stay); a result still queued is then skipped. */
export async function deleteExperiment(db: Executor, projectId: string, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom('experiments').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return deleted.numDeletedRows > 0n
}
