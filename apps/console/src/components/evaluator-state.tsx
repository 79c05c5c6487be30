import type { Evaluator, JudgmentCounts } from '../api/types.ts'
import { formatCost, formatCostExact, formatCount } from '../lib/format.ts'

/** Judging new traces, or paused (runs work either way). */
export function EvaluatorState({ evaluator }: { evaluator: Pick<Evaluator, 'enabled'> }) {
  return evaluator.enabled ? <span className="badge ok">active</span> : <span className="badge muted">paused</span>
}

/** "12 completed · 1 failed · 3 pending": the counts that are not zero. */
export function JudgmentCountsText({ counts }: { counts: JudgmentCounts }) {
  const parts = (['completed', 'failed', 'pending', 'skipped'] as const).filter((status) => counts[status] > 0)
  if (parts.length === 0) return <span className="muted">none yet</span>
  return (
    <span className="judgment-counts">
      {parts.map((status) => (
        <span key={status} className={status === 'failed' ? 'error-text' : status === 'completed' ? undefined : 'muted'}>
          {formatCount(counts[status])} {status}
        </span>
      ))}
    </span>
  )
}

/** What the judge calls cost: dollars, and tokens in and out. */
export function JudgeSpend({ judge }: { judge: Evaluator['judge'] }) {
  return (
    <span>
      <span title={formatCostExact(judge.costUsd)}>{formatCost(judge.costUsd)}</span>
      <span className="muted small">
        {' '}
        · {formatCount(judge.inputTokens)} in / {formatCount(judge.outputTokens)} out
      </span>
    </span>
  )
}
