import type { Score } from '../api/types.ts'
import { scoreText } from '../lib/score-format.ts'

/**
 * A thumb drawn, not an emoji: a machine without an emoji font (a headless browser, many Linux
 * desktops) would show an empty box.
 */
export function Thumb({ up }: { up: boolean }) {
  return (
    <svg className={up ? 'thumb' : 'thumb down'} viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2-.8-.4-1.1L13.2 1 6.6 7.6C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z" fill="currentColor" />
    </svg>
  )
}

/** A score's value: a thumb for a boolean (named for screen readers), else its text. */
export function ScoreValue({ score }: { score: Pick<Score, 'dataType' | 'value'> }) {
  if (score.dataType !== 'boolean') return <>{scoreText(score)}</>
  const up = score.value === true
  return (
    <>
      <Thumb up={up} />
      <span className="visually-hidden">{up ? 'thumbs up' : 'thumbs down'}</span>
    </>
  )
}
