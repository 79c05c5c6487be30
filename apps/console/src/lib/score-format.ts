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

/** Who gave a score, for display: the key that sent it is an id nobody recognises, so it is left to the tooltip. */
export const authorText = (author: string | null): string | null => (author === null || author.startsWith('key:') ? null : author)
