import {
  advanceErasure, deleteDatasetItemsOf, deleteJudgmentsOf, deleteScoresOf, deleteSpansOfTraces, deleteTraceSummaries, erasureTraceBatch,
  lowerUsageRollups, pendingDeltasName, recomputeSessions, recordErasureBatch, sessionsWithoutRow, sql, transactionWithClient,
  type Db, type ErasedSpan, type ErasedTraceSummary, type ErasureCounts, type ErasureDto,
} from '@tracewell/db'
import { FOLD_LOCK, foldInTransaction, type FoldLimits } from './summary-fold.ts'
import { UsageCombinationMerge, UsageDeltas } from './usage-deltas.ts'

// One batch of an erasure (GDPR art. 17; the API is in the control plane, the loop in
// erasure-runner.ts): up to `maxTraces` of the subject's traces erased in one transaction, so a
// process killed mid-erasure leaves each batch done or not done, and the next run goes on from the
// batches recorded.
//
// The batch holds the summariser's fold lock, so no fold runs beside it, and first folds what is
// pending itself: every span it deletes has then been counted in the summaries exactly once, and
// it takes back exactly that (the trace's summary, its counts in the rollups, its spans' figures
// from the rollups). A span stored after the fold (a writer commits while the batch runs) has its
// delta visible once the batch has deleted the spans; a batch that then finds a pending delta of
// its traces or subject rolls its erasure back to the savepoint and is tried again, keeping the
// fold. Spans still in the queue when the erasure's first pass ends are taken by its re-check.

export interface EraseBatchOptions {
  maxTraces: number
  foldLimits: FoldLimits
  /** How long after its first pass an erasure looks again (the queue drained meanwhile). */
  recheckAfterMs: number
}

/**
 * What a batch did: `busy` (a fold held the lock), `behind` (the summaries are more than a fold
 * behind: the batch folded and left its erasure for later), `pending` (spans of its traces arrived
 * meanwhile), or the traces it took and what it deleted (no traces: the erasure moved on to its
 * re-check, or completed).
 */
export type EraseBatchResult = 'busy' | 'behind' | 'pending' | { traces: number; deleted: ErasureCounts }

export function eraseBatch(db: Db, erasure: ErasureDto, options: EraseBatchOptions): Promise<EraseBatchResult> {
  return transactionWithClient(db, async (trx, client): Promise<EraseBatchResult> => {
    const { rows: lock } = await sql<{ held: boolean }>`select pg_try_advisory_xact_lock(${FOLD_LOCK}) as held`.execute(trx)
    if (lock[0]?.held !== true) return 'busy'
    const folded = await foldInTransaction(db, trx, client, options.foldLimits)
    if (folded.deltas >= options.foldLimits.maxDeltas || folded.traces >= options.foldLimits.maxTraces) return 'behind'

    await sql`savepoint erasure`.execute(trx)
    const traceIds = await erasureTraceBatch(trx, erasure, options.maxTraces)
    const spans = await deleteSpansOfTraces(trx, erasure.projectId, traceIds)
    if (await pendingDeltasName(trx, erasure, traceIds)) {
      await sql`rollback to savepoint erasure`.execute(trx)
      return 'pending'
    }
    if (traceIds.length === 0) {
      await advanceErasure(trx, erasure.id, options.recheckAfterMs)
      return { traces: 0, deleted: { spans: 0, traces: 0, sessions: 0, scores: 0, judgments: 0, datasetItems: 0 } }
    }

    const summaries = await deleteTraceSummaries(trx, erasure.projectId, traceIds)
    await lowerUsageRollups(trx, rollupReductions(erasure.projectId, spans, summaries))
    const sessionIds = [...new Set(summaries.flatMap((summary) => (summary.session_id === null ? [] : [summary.session_id])))].sort()
    await recomputeSessions(trx, sessionIds.map((session_id) => ({ project_id: erasure.projectId, session_id })))
    const goneSessions = await sessionsWithoutRow(trx, erasure.projectId, sessionIds)

    const scores = await deleteScoresOf(trx, erasure.projectId, traceIds, goneSessions)
    const judgments = await deleteJudgmentsOf(trx, erasure.projectId, traceIds)
    const items = await deleteDatasetItemsOf(trx, erasure.projectId, traceIds)
    const erasedTraces = new Set([...spans.map((span) => span.trace_id), ...summaries.map((summary) => summary.trace_id)])
    const deleted: ErasureCounts = {
      spans: spans.length, traces: erasedTraces.size, sessions: goneSessions.length, scores, judgments, datasetItems: items.items,
    }
    await recordErasureBatch(trx, erasure.id, traceIds, items.resultTraces.filter((trace) => !traceIds.includes(trace)), deleted)
    return { traces: traceIds.length, deleted }
  })
}

/**
 * What the deleted spans and summaries counted in the rollups, row by row: the spans' figures as
 * the write path added them (UsageDeltas, the same keys, buckets and exact decimal sums), and each
 * trace once in the rows its summary counted it in.
 */
export function rollupReductions(projectId: string, spans: readonly ErasedSpan[], summaries: readonly ErasedTraceSummary[]) {
  const deltas = new UsageDeltas()
  for (const span of spans) {
    deltas.add(projectId, {
      startTimeUnixNano: `${span.start_us}000`,
      durationNs: span.duration_ns,
      statusCode: span.status_code,
      serviceName: span.service_name,
      llmModel: span.llm_model,
      llmVendor: span.llm_vendor,
      llmRequestType: span.llm_request_type,
      inputTokens: span.input_tokens === null ? null : Number(span.input_tokens),
      outputTokens: span.output_tokens === null ? null : Number(span.output_tokens),
      totalCostUsd: span.total_cost_usd,
      userId: span.user_id,
    })
  }
  const merge = new UsageCombinationMerge()
  for (const combination of deltas.combinations()) merge.add(combination)
  for (const summary of summaries) merge.countTrace(summary, 1)
  return merge.rollupRows()
}
