import type { Score } from '../api/types.ts'

/** A score's value as text: thumbs up/down for a boolean, the label of a category, the number otherwise. */
export function scoreText(score: Pick<Score, 'dataType' | 'value'>): string {
  if (score.dataType === 'boolean') return score.value === true ? 'thumbs up' : 'thumbs down'
  if (typeof score.value === 'number') return Number.isInteger(score.value) ? String(score.value) : score.value.toFixed(2)
  return String(score.value)
}

/** The scores about the trace itself (no span) or about one span. */
export function scoresOf(scores: readonly Score[] | undefined, spanId: string | null): Score[] {
  return (scores ?? []).filter((score) => (score.spanId ?? null) === spanId)
}

const evaluatorAuthor = 'evaluator:'

/**
 * Who gave a score, for display. A judge's score names its evaluator by id (`evaluator:<id>`): it
 * reads as the evaluator's name (or as a deleted one's). The key that sent a score is an id nobody
 * recognises, so it is left to the tooltip.
 */
export function authorText(score: Pick<Score, 'author' | 'evaluatorId' | 'evaluatorName'>, evaluatorNames: ReadonlyMap<string, string>): string | null {
  const evaluatorId = evaluatorOf(score)
  if (evaluatorId !== null) return score.evaluatorName ?? evaluatorNames.get(evaluatorId) ?? 'a deleted evaluator'
  return score.author === null || score.author.startsWith('key:') ? null : score.author
}

/** The evaluator that gave a score, if a judge did. */
export const evaluatorOf = (score: Pick<Score, 'author' | 'evaluatorId'>): string | null =>
  score.evaluatorId ?? (score.author?.startsWith(evaluatorAuthor) ? score.author.slice(evaluatorAuthor.length) : null)
