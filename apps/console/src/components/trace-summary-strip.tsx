import type { ReactNode } from 'react'
import { formatCount, formatDuration, formatTime } from '../lib/format.ts'
import type { Waterfall } from '../lib/span-tree.ts'

/** A trace's figures at a glance (start, duration, spans, errors), with the page's actions beside them. */
export function TraceSummaryStrip({ waterfall, children }: { waterfall: Waterfall; children?: ReactNode }) {
  const root = waterfall.rows[0]?.span
  const errors = waterfall.rows.filter((row) => row.isError).length
  return (
    <dl className="summary-strip">
      <div>
        <dt>Started</dt>
        <dd>{formatTime(root?.startTime)}</dd>
      </div>
      <div>
        <dt>Duration</dt>
        <dd>{formatDuration(waterfall.totalMicros / 1000)}</dd>
      </div>
      <div>
        <dt>Spans</dt>
        <dd>{formatCount(waterfall.rows.length)}</dd>
      </div>
      <div>
        <dt>Errors</dt>
        <dd className={errors > 0 ? 'error-text' : undefined}>{formatCount(errors)}</dd>
      </div>
      {children}
    </dl>
  )
}
