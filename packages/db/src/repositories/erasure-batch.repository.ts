import { sql } from 'kysely'
import type { ErasureCounts, ErasureDto } from './erasures.repository.ts'
import type { Executor } from './executor.ts'
import type { UsageRollupFigures } from './usage-rollup-figures.ts'

// The statements of one erasure batch, run in one transaction under the summariser's fold lock by
// @tracewell/write-path's eraseBatch, which decides their order and what the rollups lose.

/** The traces an erasure takes next: those listed still to do, then the subject's traces that have a summary. */
export async function erasureTraceBatch(db: Executor, erasure: ErasureDto, limit: number): Promise<string[]> {
  const { rows: listed } = await sql<{ trace_id: string }>`
    select trace_id from erasure_traces where erasure_id = ${erasure.id} and not erased order by trace_id limit ${limit}`.execute(db)
  const traces = listed.map((row) => row.trace_id)
  const room = limit - traces.length
  if (room === 0 || (erasure.userId === null && erasure.sessionId === null)) return traces
  // Through the partial indexes on (project_id, user_id | session_id, start_time).
  const column = erasure.userId !== null ? sql.ref('user_id') : sql.ref('session_id')
  const { rows: found } = await sql<{ trace_id: string }>`
    select trace_id from trace_summaries
    where project_id = ${erasure.projectId} and ${column} = ${erasure.userId ?? erasure.sessionId} and not (trace_id = any(${traces}::text[]))
    limit ${room}`.execute(db)
  return [...traces, ...found.map((row) => row.trace_id)]
}

/** A deleted span's figures, as the rollups counted them. */
export interface ErasedSpan {
  trace_id: string
  /** Its start, in microseconds since the epoch (decimal). */
  start_us: string
  duration_ns: string
  status_code: number
  service_name: string | null
  llm_model: string | null
  llm_vendor: string | null
  llm_request_type: string | null
  input_tokens: string | null
  output_tokens: string | null
  total_cost_usd: string | null
  user_id: string | null
}

/** Deletes the traces' spans, in every day; answers what each deleted span counted in the rollups. */
export async function deleteSpansOfTraces(db: Executor, projectId: string, traceIds: readonly string[]): Promise<ErasedSpan[]> {
  const { rows } = await sql<ErasedSpan>`
    delete from spans where project_id = ${projectId} and trace_id = any(${traceIds}::text[])
    returning trace_id, (extract(epoch from start_time) * 1000000)::bigint::text as start_us, duration_ns::text as duration_ns, status_code,
      service_name, llm_model, llm_vendor, llm_request_type, input_tokens::text as input_tokens, output_tokens::text as output_tokens,
      total_cost_usd::text as total_cost_usd, user_id`.execute(db)
  return rows
}

/**
 * Whether a summary delta not yet folded names one of the traces, or a trace of the erasure's user
 * or session: spans the fold has not counted yet, which the erasure must not take back. A delta is
 * an array of its values (@tracewell/write-path's trace-delta-layout.ts: project 0, trace 1,
 * session 18, user 19) or, written by a writer before it, an object naming them.
 */
export async function pendingDeltasName(db: Executor, erasure: ErasureDto, traceIds: readonly string[]): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    select exists (
      select 1 from summary_deltas d cross join lateral json_array_elements(d.traces::json) as e
      cross join lateral (select coalesce(e->>'project_id', e->>0) as project_id, coalesce(e->>'trace_id', e->>1) as trace_id,
        coalesce(e->>'user_id', e->>19) as user_id, coalesce(e->>'session_id', e->>18) as session_id) as t
      where t.project_id = ${erasure.projectId}
        and (t.trace_id = any(${traceIds}::text[]) or t.user_id = ${erasure.userId} or t.session_id = ${erasure.sessionId})) as found`.execute(db)
  return rows[0]?.found === true
}

/** A deleted trace summary's keys into the rollups and sessions. */
export interface ErasedTraceSummary {
  project_id: string
  trace_id: string
  /** ISO 8601 with microseconds, as the fold writes it. */
  start_time: string
  models: string[]
  response_models: string[]
  vendors: string[]
  services: string[]
  service_name: string | null
  user_id: string | null
  session_id: string | null
  end_time: string
  prompts: string[]
  tags: string[]
  span_count: number
  error_count: number
  input_tokens: number | null
  output_tokens: number | null
  /** Exact decimal text. */
  cost_usd: string | null
}

/** Deletes the traces' summaries (in every fold day). */
export async function deleteTraceSummaries(db: Executor, projectId: string, traceIds: readonly string[]): Promise<ErasedTraceSummary[]> {
  const { rows } = await sql<Omit<ErasedTraceSummary, 'input_tokens' | 'output_tokens'> & { input_tokens: string | null; output_tokens: string | null }>`
    delete from trace_summaries where project_id = ${projectId} and trace_id = any(${traceIds}::text[])
    returning project_id, trace_id, to_char(start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as start_time,
      to_char(end_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as end_time,
      models, response_models, vendors, services, service_name, user_id, session_id, prompts, tags, span_count, error_count, input_tokens, output_tokens, cost_usd::text as cost_usd`.execute(db)
  return rows.map((row) => ({
    ...row,
    input_tokens: row.input_tokens === null ? null : Number(row.input_tokens),
    output_tokens: row.output_tokens === null ? null : Number(row.output_tokens),
  }))
}

/** What went from one usage_rollups row (all figures positive: they are subtracted). */
export type RollupReduction = UsageRollupFigures

// A span counts in a row of its hour under the row's dimension and value (as summaryMismatches recomputes them).
const SPAN_IN_ROW = sql`s.project_id = u.project_id and s.start_time >= u.hour and s.start_time < u.hour + interval '1 hour'
  and case u.dimension when 'all' then true when 'model' then coalesce(s.llm_model, '') = u.value
    when 'vendor' then coalesce(s.llm_vendor, '') = u.value when 'service' then coalesce(s.service_name, '') = u.value
    else coalesce(s.user_id, '') = u.value end
  and s.llm_request_type is distinct from 'invoke_agent'`

// A trace counts in a row of the whole trace (migration 2026-12-06T0700) of the hour it started, by its session, prompts or tags
// (Tracewell's own traces never), and by its shape (migration 2026-12-06T1620; but those whose root is Tracewell's).
const TRACE_IN_ROW = sql`t.project_id = u.project_id and t.start_time >= u.hour and t.start_time < u.hour + interval '1 hour'
  and case u.dimension when 'shape' then t.service_name is distinct from 'tracewell' else not ('tracewell' = any(t.services)) end
  and case u.dimension when 'shape' then tracewell_trace_shape(t.models, t.response_models, t.vendors, t.services) = u.value
    when 'session' then coalesce(t.session_id, '') = u.value
    when 'prompt' then u.value = any(t.prompts) or (u.value = '' and cardinality(t.prompts) = 0)
    else u.value = any(t.tags) or (u.value = '' and cardinality(t.tags) = 0) end`

/**
 * Lowers the rollup rows by what went, exactly (numeric arithmetic), so that each ends as a
 * recomputation from the remaining spans and traces would give it: a row left with no trace and
 * no span is deleted; a token or cost sum lowered to 0 is unknown (null) when no remaining span
 * of the row (trace, in a row of the whole trace) reports it, as a sum over no reported value is.
 * Call it after the spans and summaries are deleted.
 */
export async function lowerUsageRollups(db: Executor, reductions: readonly RollupReduction[]): Promise<void> {
  if (reductions.length === 0) return
  const rows = JSON.stringify(reductions)
  const recordset = sql`json_to_recordset(${rows}::json) as d(project_id text, dimension text, hour timestamptz, value text, traces integer,
    spans integer, errors integer, input_tokens bigint, output_tokens bigint, cost_usd numeric, latency integer[], error_traces integer, durations text,
    hours integer[])`
  const sameRow = sql`u.project_id = d.project_id and u.dimension = d.dimension and u.hour = d.hour and u.value = d.value`
  await sql`
    update usage_rollups u set traces = u.traces - d.traces, spans = u.spans - d.spans, errors = u.errors - d.errors,
      input_tokens = u.input_tokens - coalesce(d.input_tokens, 0), output_tokens = u.output_tokens - coalesce(d.output_tokens, 0),
      cost_usd = u.cost_usd - coalesce(d.cost_usd, 0), latency = array(select x - y from unnest(u.latency, d.latency) as l(x, y)),
      error_traces = u.error_traces - d.error_traces, durations = tracewell_histogram_add(u.durations, d.durations::integer[], -1),
      hours = case when d.hours is null then u.hours else array(select x - y from unnest(coalesce(u.hours, array_fill(0, array[24])), d.hours) as h(x, y)) end
    from ${recordset} where ${sameRow}`.execute(db)
  await sql`delete from usage_rollups u using ${recordset} where ${sameRow} and u.traces = 0 and u.spans = 0`.execute(db)
  await sql`
    update usage_rollups u set
      input_tokens = case when u.input_tokens = 0 and not exists (select 1 from spans s where ${SPAN_IN_ROW} and s.input_tokens is not null) then null else u.input_tokens end,
      output_tokens = case when u.output_tokens = 0 and not exists (select 1 from spans s where ${SPAN_IN_ROW} and s.output_tokens is not null) then null else u.output_tokens end,
      cost_usd = case when u.cost_usd = 0 and not exists (select 1 from spans s where ${SPAN_IN_ROW} and s.total_cost_usd is not null) then null else u.cost_usd end
    from ${recordset} where ${sameRow} and (u.input_tokens = 0 or u.output_tokens = 0 or u.cost_usd = 0)
      and u.dimension not in ('session', 'prompt', 'tag', 'shape')`.execute(db)
  await sql`
    update usage_rollups u set
      input_tokens = case when u.input_tokens = 0 and not exists (select 1 from trace_summaries t where ${TRACE_IN_ROW} and t.input_tokens is not null) then null else u.input_tokens end,
      output_tokens = case when u.output_tokens = 0 and not exists (select 1 from trace_summaries t where ${TRACE_IN_ROW} and t.output_tokens is not null) then null else u.output_tokens end,
      cost_usd = case when u.cost_usd = 0 and not exists (select 1 from trace_summaries t where ${TRACE_IN_ROW} and t.cost_usd is not null) then null else u.cost_usd end
    from ${recordset} where ${sameRow} and (u.input_tokens = 0 or u.output_tokens = 0 or u.cost_usd = 0)
      and u.dimension in ('session', 'prompt', 'tag', 'shape')`.execute(db)
}

/** Of the sessions, those left without a row (their last trace went). */
export async function sessionsWithoutRow(db: Executor, projectId: string, sessionIds: readonly string[]): Promise<string[]> {
  if (sessionIds.length === 0) return []
  const { rows } = await sql<{ session_id: string }>`
    select k.session_id from unnest(${sessionIds}::text[]) as k(session_id)
    where not exists (select 1 from session_summaries s where s.project_id = ${projectId} and s.session_id = k.session_id)`.execute(db)
  return rows.map((row) => row.session_id)
}

/** Deletes the scores and annotations of the traces (and their spans), and those of the sessions given; how many. */
export async function deleteScoresOf(db: Executor, projectId: string, traceIds: readonly string[], sessionIds: readonly string[]): Promise<number> {
  const traces = await sql`delete from scores where project_id = ${projectId} and trace_id = any(${traceIds}::text[])`.execute(db)
  const sessions = sessionIds.length === 0
    ? undefined
    : await sql`delete from scores where project_id = ${projectId} and trace_id is null and session_id = any(${sessionIds}::text[])`.execute(db)
  return Number(traces.numAffectedRows ?? 0n) + Number(sessions?.numAffectedRows ?? 0n)
}

/** Deletes the judgments of the traces (their LLM judges' rows); how many. */
export async function deleteJudgmentsOf(db: Executor, projectId: string, traceIds: readonly string[]): Promise<number> {
  const result = await sql`delete from evaluation_jobs where project_id = ${projectId} and trace_id = any(${traceIds}::text[])`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}

/**
 * Deletes the dataset items taken from the traces (every version of each) and the experiment
 * results of those items; answers how many items went and the traces of those results (the runs
 * of the items' inputs, which hold them too).
 */
export async function deleteDatasetItemsOf(db: Executor, projectId: string, traceIds: readonly string[]): Promise<{ items: number; resultTraces: string[] }> {
  const { rows } = await sql<{ items: number; result_traces: string[] }>`
    with items as (
      delete from dataset_items i using datasets d
      where i.source_trace_id = any(${traceIds}::text[]) and d.id = i.dataset_id and d.project_id = ${projectId}
      returning i.dataset_id, i.id),
    results as (
      delete from experiment_results r using (select distinct dataset_id, id from items) as gone, experiments e
      where e.dataset_id = gone.dataset_id and r.experiment_id = e.id and r.dataset_item_id = gone.id
      returning r.trace_id)
    select (select count(*)::integer from (select distinct dataset_id, id from items) as k) as items,
      array(select distinct trace_id from results where trace_id is not null) as result_traces`.execute(db)
  return { items: rows[0]?.items ?? 0, resultTraces: rows[0]?.result_traces ?? [] }
}

/**
 * Records a batch: its traces erased, the traces it found to take later, its counts added to the
 * request's, and the request running.
 */
export async function recordErasureBatch(db: Executor, erasureId: string, erased: readonly string[], toTake: readonly string[], counts: ErasureCounts): Promise<void> {
  await sql`
    insert into erasure_traces (erasure_id, trace_id, erased) select ${erasureId}, unnest(${erased}::text[]), true
    on conflict (erasure_id, trace_id) do update set erased = true`.execute(db)
  if (toTake.length > 0) {
    await sql`insert into erasure_traces (erasure_id, trace_id) select ${erasureId}, unnest(${toTake}::text[]) on conflict do nothing`.execute(db)
  }
  await sql`
    update erasure_requests set status = case when status = 'queued' then 'running' else status end,
      deleted_spans = deleted_spans + ${counts.spans}, deleted_traces = deleted_traces + ${counts.traces},
      deleted_sessions = deleted_sessions + ${counts.sessions}, deleted_scores = deleted_scores + ${counts.scores},
      deleted_judgments = deleted_judgments + ${counts.judgments}, deleted_dataset_items = deleted_dataset_items + ${counts.datasetItems},
      updated_at = now()
    where id = ${erasureId}`.execute(db)
}

/**
 * An erasure that found nothing left to take moves on: from its first pass to the re-check, due
 * `recheckAfterMs` later, with every trace it took to be looked at again; from the re-check to
 * completed.
 */
export async function advanceErasure(db: Executor, erasureId: string, recheckAfterMs: number): Promise<void> {
  const { rows } = await sql<{ status: string }>`
    update erasure_requests set
      status = case when status = 'rechecking' then 'completed' else 'rechecking' end,
      recheck_at = case when status = 'rechecking' then recheck_at else now() + ${`${recheckAfterMs} milliseconds`}::interval end,
      completed_at = case when status = 'rechecking' then now() end,
      updated_at = now()
    where id = ${erasureId} returning status`.execute(db)
  if (rows[0]?.status === 'rechecking') await sql`update erasure_traces set erased = false where erasure_id = ${erasureId}`.execute(db)
}
