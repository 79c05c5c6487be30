import { useState } from 'react'
import { apiPath } from '../api/client.ts'

/** A day (YYYY-MM-DD, from a date input) as the UTC instant it starts, or undefined when empty. */
const dayStart = (day: string): string | undefined => (day === '' ? undefined : `${day}T00:00:00Z`)
/** The instant the day after `day` starts: the export's `to` is exclusive, the day inclusive. */
const dayAfter = (day: string): string | undefined => (day === '' ? undefined : new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString())

/**
 * Downloads a project's spans (GET /api/projects/:projectId/export): a plain link, so the browser
 * streams the file to disk itself with the session cookie, however large it is.
 */
export function SpanExport({ projectId }: { projectId: string }) {
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const [format, setFormat] = useState<'jsonl' | 'parquet'>('jsonl')
  const href = apiPath(`/api/projects/${encodeURIComponent(projectId)}/export`, { format, from: dayStart(from), to: dayAfter(to) })
  return (
    <div className="form" role="group" aria-label="Export spans">
      <label>
        <span>From (UTC day, inclusive)</span>
        <input type="date" value={from} onChange={(event) => setFrom(event.target.value)} />
      </label>
      <label>
        <span>To (UTC day, inclusive)</span>
        <input type="date" value={to} onChange={(event) => setTo(event.target.value)} />
      </label>
      <label>
        <span>Format</span>
        <select value={format} onChange={(event) => setFormat(event.target.value as 'jsonl' | 'parquet')}>
          <option value="jsonl">OTLP/JSON lines</option>
          <option value="parquet">Parquet</option>
        </select>
      </label>
      <p className="muted small">Every span of the days chosen (all of them when left empty), oldest first.</p>
      <a className="button primary" href={href} download>
        Export spans
      </a>
    </div>
  )
}
