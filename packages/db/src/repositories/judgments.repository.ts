import { sql, type RawBuilder, type Selectable } from 'kysely'
import type { JudgmentStatus, JudgmentsTable } from '../database.ts'
import { findEvaluatorById, type EvaluatorDto } from './evaluators.repository.ts'
import type { Executor } from './executor.ts'
import { engineOf, type Db } from '../create-db.ts'
import { withStatementTimeout } from '../statement-timeout.ts'
import type { CallSpend } from './call-spend.ts'
import { addRowSpend, completeFinishedBatches, judgmentRows, recordRowAttempt, recordRowError, stalePendingRows } from './job-rows.repository.ts'
import type { QueuedRow } from './queued-row.ts'
import { traceFilterOf } from './trace-filter-params.ts'
import { notTracewellTrace } from './tracewell-calls.ts'
import { traceFilterConditions } from './trace-search.repository.ts'

// The judgments of evaluators: which traces each evaluator takes (new ones, once complete; or a
// run's), and what became of each. A row per (evaluator, trace) for new traces and per (run,
// trace) for runs makes a trace judged once however often the worker looks, and keeps every
// failure with its error.

/** A trace is sampled when this hash of evaluator and trace, in [0, 1), is below the rate: the same answer every time it is asked. */
const sampledBelow = (evaluatorId: string, rate: number) =>
  sql<boolean>`(('x' || substr(md5(${evaluatorId} || t.trace_id), 1, 8))::bit(32)::bigint / 4294967296.0) < ${rate}`

/** The reason a judgment left out by sampling gives (the migration that added reasons wrote it on older ones). */
const notSampledReason = "not sampled (the evaluator's sampling rate)"

export interface NewTraceWindow {
  /** A trace is complete once none of its spans arrived for this long. */
  quietMs: number
  /** Only traces that started this recently are looked at. */
  lookbackMs: number
  /** At most this many traces per evaluator per look. */
  limit: number
}

/** Where a look at an evaluator's new traces left off: the last summary of a full page, in (start_time, trace_id) order. */
export interface NewTraceCursor {
  startTime: Date
  traceId: string
}

export interface NewTracePage {
  /** The pending judgments taken, for the queue. */
  jobIds: string[]
  /** Where the next look goes on from; undefined: from the start of the lookback window again. */
  resumeAfter: NewTraceCursor | undefined
}

/** Summaries one look examines at most, per evaluator: bounds the statement however many traces the window holds. */
export const NEW_TRACES_PAGE = 5_000

/**
 * Takes the evaluator's new traces: started within the lookback, with a span that arrived after
 * the evaluator was made, none arrived in the quiet period, matching its filter, not taken before,
 * not Tracewell's own (tracewell-calls.ts: an experiment asks for its judgments itself).
 * Each becomes a pending judgment, or a skipped one when sampling leaves it out. The ids of the
 * pending ones, for the queue.
 */
export async function takeNewTraces(db: Db, evaluator: EvaluatorDto, window: NewTraceWindow, statementTimeoutMs = 5_000): Promise<string[]> {
  return (await takeNewTracesPage(db, evaluator, window, statementTimeoutMs)).jobIds
}

/**
 * The planner settings the search runs with, for its transaction only: with the sequential and
 * bitmap scans, sorts and hash and merge joins priced out, the plan is the index walk below
 * whatever the statistics say (without any, Postgres guessed 162 summaries where 200,000 were, and
 * sorted them all before its LIMIT). Run through withStatementTimeout, so with a statement timeout.
 */
async function inStatisticsFreePlan<T>(db: Db, statementTimeoutMs: number, work: (executor: Executor) => Promise<T>): Promise<T> {
  return withStatementTimeout(db, statementTimeoutMs, async (executor) => {
    if (engineOf.get(db) === 'postgres') {
      await sql`select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),
        set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`.execute(executor)
    }
    return work(executor)
  })
}

/** EXPLAIN (FORMAT JSON) of takeNewTracesPage's statement, as it is planned there (for the test of its plan). */
export async function explainNewTracesPage(db: Db, evaluator: EvaluatorDto, window: NewTracePageWindow): Promise<unknown> {
  return inStatisticsFreePlan(db, 5_000, async (executor) => {
    const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) ${newTracesPageStatement(evaluator, window)}`.execute(executor)
    return rows[0]?.['QUERY PLAN']
  })
}

/**
 * takeNewTraces over one page of the lookback window: at most NEW_TRACES_PAGE summaries after
 * `after` (or from the window's start), oldest first. Its plan does not depend on statistics (the
 * evaluator's tables may never have been analysed: a plan that joined the spans by hash ran for
 * minutes): the page is a LIMIT over the summaries' (project_id, start_time) index
 * (inStatisticsFreePlan), and every
 * other question is an EXISTS in the page's select list, which Postgres runs as a subplan per row
 * (a primary-key prefix probe, pruned to the partitions of the trace's own time), never as a join.
 * Successive looks walk the window page by page, so a window of judged traces cannot hide newer
 * ones, and return to its start once a page comes back short (late spans make new summaries of
 * old start times).
 */
export async function takeNewTracesPage(db: Db, evaluator: EvaluatorDto, window: NewTracePageWindow, statementTimeoutMs: number): Promise<NewTracePage> {
  const { rows } = await inStatisticsFreePlan(db, statementTimeoutMs, (executor) => newTracesPageStatement(evaluator, window).execute(executor))
  const jobIds = rows.flatMap((row) => (row.id !== null && row.status === 'pending' ? [row.id] : []))
  const taken = rows.filter((row) => row.id !== null).length
  const [summary] = rows
  // The limit reached: the same page again next time (its other traces are still wanted). A full
  // page: the next one. A short page: the window's start again.
  const resumeAfter =
    taken >= window.limit ? window.after
    : summary && summary.scanned >= NEW_TRACES_PAGE && summary.last_start && summary.last_trace ? { startTime: summary.last_start, traceId: summary.last_trace }
    : undefined
  return { jobIds, resumeAfter }
}

export type NewTracePageWindow = NewTraceWindow & { after?: NewTraceCursor | undefined }

/** The one statement of takeNewTracesPage (exported for the test that reads its plan). */
export function newTracesPageStatement(evaluator: EvaluatorDto, window: NewTracePageWindow) {
  const filter = [...traceFilterConditions(traceFilterOf(evaluator.projectId, evaluator.filter)), notTracewellTrace]
  const ofTrace = sql`s.project_id = t.project_id and s.trace_id = t.trace_id and s.start_time >= t.start_time and s.start_time <= t.end_time`
  const after = window.after
  return sql<{ id: string | null; status: JudgmentStatus | null; scanned: number; last_start: Date | null; last_trace: string | null }>`
    with page as materialized (
      select t.project_id, t.trace_id, t.start_time,
        (${sql.join(filter, sql` and `)})
          and exists (select 1 from spans s where ${ofTrace} and s.received_at >= ${evaluator.createdAt}::timestamptz)
          and not exists (select 1 from spans s where ${ofTrace} and s.received_at > now() - ${`${window.quietMs} milliseconds`}::interval)
          and not exists (select 1 from evaluation_jobs j where j.evaluator_id = ${evaluator.id} and j.trace_id = t.trace_id and j.run_id is null)
          as wanted,
        ${sampledBelow(evaluator.id, evaluator.samplingRate)} as sampled
      from trace_summaries t
      where t.project_id = ${evaluator.projectId}
        and t.start_time >= ${after ? sql`greatest(now() - ${`${window.lookbackMs} milliseconds`}::interval, ${after.startTime}::timestamptz)` : sql`now() - ${`${window.lookbackMs} milliseconds`}::interval`}
        ${after ? sql`and (t.start_time, t.trace_id) > (${after.startTime}::timestamptz, ${after.traceId})` : sql``}
      order by t.start_time, t.trace_id
      limit ${NEW_TRACES_PAGE}
    ), taken as (
      insert into evaluation_jobs (project_id, evaluator_id, trace_id, status, skip_reason)
      select p.project_id, ${evaluator.id}, p.trace_id, case when p.sampled then 'pending' else 'skipped' end,
        case when p.sampled then null else ${notSampledReason} end
      from page p where p.wanted
      order by p.start_time, p.trace_id
      limit ${window.limit}
      on conflict (evaluator_id, trace_id) where run_id is null do nothing
      returning id, status
    ), last as (
      select count(*)::integer as scanned, max(start_time) as last_start, (array_agg(trace_id order by start_time desc, trace_id desc))[1] as last_trace from page
    )
    select taken.id, taken.status, last.scanned, last.last_start, last.last_trace from last left join taken on true`
}

/**
 * Pending judgments of one trace by the given evaluators of its project (an experiment's output):
 * evaluators deleted meanwhile are left out, a trace judged already by one is not judged again.
 * The ids, for the queue.
 */
export async function createTraceJudgments(db: Executor, projectId: string, evaluatorIds: readonly string[], traceId: string): Promise<string[]> {
  if (evaluatorIds.length === 0) return []
  const { rows } = await sql<{ id: string }>`
    insert into evaluation_jobs (project_id, evaluator_id, trace_id, status)
    select e.project_id, e.id, ${traceId}, 'pending' from evaluators e
    where e.project_id = ${projectId} and e.id in (${sql.join(evaluatorIds)})
    on conflict (evaluator_id, trace_id) where run_id is null do nothing
    returning id`.execute(db)
  return rows.map((row) => row.id)
}

/** Most traces one on-demand run judges. */
export const RUN_MAX_TRACES = 10_000

/**
 * Starts the queued runs: each takes the traces of its evaluator's filter that started in its
 * window (every one, no sampling: a run is asked for), at most RUN_MAX_TRACES, as pending
 * judgments. The ids of the judgments, for the queue.
 */
export async function startQueuedRuns(db: Executor): Promise<QueuedRow[]> {
  const { rows: runs } = await sql<{ id: string; evaluator_id: string; from_time: Date; to_time: Date }>`
    select id, evaluator_id, from_time, to_time from evaluation_runs where status = 'queued' order by created_at limit 10`.execute(db)
  const jobs: QueuedRow[] = []
  for (const run of runs) {
    const evaluator = await findEvaluatorById(db, run.evaluator_id)
    if (evaluator === undefined) continue
    const where = [...traceFilterConditions(traceFilterOf(evaluator.projectId, evaluator.filter)), notTracewellTrace, sql`t.start_time >= ${run.from_time}`, sql`t.start_time < ${run.to_time}`]
    const { rows } = await sql<{ id: string }>`
      insert into evaluation_jobs (project_id, evaluator_id, run_id, trace_id, status)
      select t.project_id, ${evaluator.id}, ${run.id}, t.trace_id, 'pending'
      from trace_summaries t where ${sql.join(where, sql` and `)}
      order by t.start_time limit ${RUN_MAX_TRACES}
      on conflict (run_id, trace_id) where run_id is not null do nothing
      returning id`.execute(db)
    await sql`update evaluation_runs set status = 'running', trace_count = (select count(*) from evaluation_jobs where run_id = ${run.id}) where id = ${run.id}`.execute(db)
    jobs.push(...rows.map((row) => ({ jobId: row.id, projectId: evaluator.projectId })))
  }
  return jobs
}

/** Marks running runs whose judgments are all done as completed. */
export const completeFinishedRuns = (db: Executor): Promise<void> => completeFinishedBatches(db, judgmentRows)

/** Pending judgments untouched for this long: their queue job may have been lost (a crash between the row and the queue). */
export const stalePendingJudgments = (db: Executor, olderThanMs: number, limit: number): Promise<QueuedRow[]> => stalePendingRows(db, judgmentRows, olderThanMs, limit)

export interface JudgmentDto {
  id: string
  projectId: string
  evaluatorId: string
  runId: string | null
  traceId: string
  status: JudgmentStatus
  attempts: number
  error: string | null
  /** Why a skipped judgment was skipped: not sampled, or nothing to judge in the trace. */
  skipReason: string | null
  scoreId: string | null
  judgeModel: string | null
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number | null
  createdAt: string
  updatedAt: string
}

/** A judgment's row as Postgres answers it. */
type JobRow = Selectable<JudgmentsTable>

const toJobDto = (row: JobRow): JudgmentDto => ({
  id: row.id,
  projectId: row.project_id,
  evaluatorId: row.evaluator_id,
  runId: row.run_id,
  traceId: row.trace_id,
  status: row.status,
  attempts: row.attempts,
  error: row.error,
  skipReason: row.skip_reason,
  scoreId: row.score_id,
  judgeModel: row.judge_model,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
  latencyMs: row.latency_ms,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
})

export async function findJudgment(db: Executor, id: string): Promise<JudgmentDto | undefined> {
  const row = await db.selectFrom('evaluation_jobs').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toJobDto(row)
}

/** Counts an attempt at a pending judgment; its number (1 for the first), or null when the judgment is no longer pending. */
export const recordJudgmentAttempt = (db: Executor, id: string): Promise<number | null> => recordRowAttempt(db, judgmentRows, id)

/** Adds calls' spend to a judgment, whatever becomes of it (job-rows.repository.ts). */
export const addJudgmentSpend = (db: Executor, id: string, spend: CallSpend): Promise<void> => addRowSpend(db, judgmentRows, id, spend)

/** Judgment rows' tokens and cost are added up by addJobSpend, attempt by attempt; completing one records what answered. */
export interface JudgmentResult {
  scoreId: string
  judgeModel: string
  latencyMs: number
}

export async function completeJudgment(db: Executor, id: string, result: JudgmentResult): Promise<void> {
  await sql`
    update evaluation_jobs set status = 'completed', error = null, score_id = ${result.scoreId}, judge_model = ${result.judgeModel},
      latency_ms = ${result.latencyMs}, updated_at = now()
    where id = ${id}`.execute(db)
}

/** Marks a pending judgment skipped, with why: the trace was never sent to the judge. */
export async function skipJudgment(db: Executor, id: string, reason: string): Promise<void> {
  await sql`update evaluation_jobs set status = 'skipped', skip_reason = ${reason}, error = null, updated_at = now() where id = ${id} and status = 'pending'`.execute(db)
}

/** Keeps the last error of an attempt; `final` marks the judgment failed (no retry is left). */
export const recordJudgmentError = (db: Executor, id: string, error: string, final: boolean): Promise<void> => recordRowError(db, judgmentRows, id, error, final)

export interface JudgmentSearch {
  projectId: string
  evaluatorId: string
  status?: JudgmentStatus | undefined
  runId?: string | undefined
  /** Judgments created at or after `from` and before `to`. */
  from?: Date | undefined
  to?: Date | undefined
  limit: number
  cursor?: { createdAt: string; id: string } | undefined
}

/** An evaluator's judgments, newest first. */
export async function listJudgments(db: Executor, search: JudgmentSearch): Promise<{ jobs: JudgmentDto[]; next: { createdAt: string; id: string } | null }> {
  const where: RawBuilder<unknown>[] = [sql`project_id = ${search.projectId}`, sql`evaluator_id = ${search.evaluatorId}`]
  if (search.status) where.push(sql`status = ${search.status}`)
  if (search.runId) where.push(sql`run_id = ${search.runId}`)
  if (search.from) where.push(sql`created_at >= ${search.from}`)
  if (search.to) where.push(sql`created_at < ${search.to}`)
  if (search.cursor) where.push(sql`(created_at, id) < (${search.cursor.createdAt}::timestamptz, ${search.cursor.id})`)
  const { rows } = await sql<JobRow & { created_text: string }>`
    select *, created_at::text as created_text from evaluation_jobs where ${sql.join(where, sql` and `)}
    order by created_at desc, id desc limit ${search.limit + 1}`.execute(db)
  const page = rows.slice(0, search.limit)
  const last = page.at(-1)
  return { jobs: page.map(toJobDto), next: rows.length > search.limit && last ? { createdAt: last.created_text, id: last.id } : null }
}
