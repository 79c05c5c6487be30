import { addJudgmentSpend, type Db, type EvaluatorDto } from '@tracewell/db'
import { callCost, derivedIds, llmCallSpan } from '@tracewell/llm-calls'
import { noCost } from '@tracewell/llm-usage'
import { storeSpans } from '@tracewell/write-path'
import type { JudgeCallRecord } from './judge.client.ts'

// What a judgment's calls cost, counted whatever became of them (issue 48 §6): every request of
// every attempt, format fallbacks and answers that were no judgment included, is a span of the
// project (service tracewell, tracewell.origin = judge), which the writer's summariser folds into
// its usage, and its tokens and cost are added to the judgment's row.

export interface JudgeAttempt {
  jobId: string
  /** The attempt's number (evaluation_jobs.attempts): with the call's index, its span's id. */
  attempt: number
  evaluator: EvaluatorDto
  /** The trace judged. */
  traceId: string
}

/**
 * Stores the attempt's calls as spans and adds their tokens and cost to the judgment. The span ids
 * are derived from the judgment, attempt and call: a redelivered attempt stores nothing twice, and
 * adds to the row only what it stored anew.
 */
export async function recordJudgeSpend(db: Db, attempt: JudgeAttempt, calls: readonly JudgeCallRecord[]): Promise<void> {
  if (calls.length === 0) return
  const { evaluator } = attempt
  const { traceId } = derivedIds(`judgment:${attempt.jobId}`)
  const priced = await Promise.all(
    calls.map(async (call) => ({ call, cost: call.answer === null ? noCost : await callCost(db, evaluator.projectId, call.answer, new Date(call.startedAtMs)) })),
  )
  const spans = priced.map(({ call, cost }, index) =>
    llmCallSpan({
      projectId: evaluator.projectId,
      traceId,
      spanId: derivedIds(`judgment:${attempt.jobId}:${attempt.attempt}:${index}`).spanId,
      origin: 'judge',
      name: `judge ${evaluator.name}`,
      startedAtMs: call.startedAtMs,
      requestedModel: evaluator.model,
      messages: call.messages,
      settings: { temperature: 0 },
      ...(call.answer === null ? {} : { answer: call.answer }),
      ...(call.error === null ? {} : { error: call.error }),
      cost,
      inputText: call.messages.at(-1)?.content ?? '',
      attributes: {
        'tracewell.evaluator.id': evaluator.id,
        'tracewell.evaluator.name': evaluator.name,
        'tracewell.judgment.id': attempt.jobId,
        'tracewell.judgment.attempt': attempt.attempt,
        'tracewell.judgment.trace_id': attempt.traceId,
      },
    }),
  )
  // All of an attempt's spans are stored in one transaction: none new means a redelivery counted them already.
  if ((await storeSpans(db, spans)).inserted === 0) return
  await addJudgmentSpend(db, attempt.jobId, {
    inputTokens: sumKnown(calls.map((call) => call.answer?.inputTokens ?? null)),
    outputTokens: sumKnown(calls.map((call) => call.answer?.outputTokens ?? null)),
    costUsd: sumKnown(priced.map(({ cost }) => cost.totalCostUsd)),
  })
}

/** The sum of the values known; null when none is. */
function sumKnown(values: ReadonlyArray<number | null>): number | null {
  const known = values.filter((value) => value !== null)
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0)
}
