import { useState, type FormEvent } from 'react'
import { useErasures, useRequestErasure, type Erasure, type ErasureSubject } from '../api/erasures.api.ts'
import { formatTime } from '../lib/format.ts'
import { ErrorMessage, Loading } from './status.tsx'

type SubjectKind = 'userId' | 'sessionId' | 'traceIds'

const kindLabels: Record<SubjectKind, string> = { userId: 'A user', sessionId: 'A session', traceIds: 'Traces by id' }

const statusLabels: Record<Erasure['status'], string> = {
  queued: 'queued',
  running: 'erasing',
  rechecking: 'checking once more',
  completed: 'completed',
}

function subjectOf(erasure: Erasure): string {
  if (erasure.userId !== null) return `user ${erasure.userId}`
  if (erasure.sessionId !== null) return `session ${erasure.sessionId}`
  return `${erasure.traceCount} trace${erasure.traceCount === 1 ? '' : 's'}`
}

function deletedText({ deleted }: Erasure): string {
  const parts: Array<[number, string]> = [
    [deleted.traces, 'traces'], [deleted.spans, 'spans'], [deleted.sessions, 'sessions'], [deleted.scores, 'scores'],
    [deleted.judgments, 'judgments'], [deleted.datasetItems, 'dataset items'],
  ]
  return parts.map(([count, what]) => `${count.toLocaleString('en')} ${what}`).join(', ')
}

/**
 * Erasure requests (GDPR art. 17) of a project: a form that asks for one, after a confirmation,
 * and the requests with their progress, which the writers make in the background.
 */
export function ErasureManager({ projectId }: { projectId: string }) {
  const erasures = useErasures(projectId)
  const request = useRequestErasure(projectId)
  const [kind, setKind] = useState<SubjectKind>('userId')
  const [value, setValue] = useState('')

  function submit(event: FormEvent) {
    event.preventDefault()
    const text = value.trim()
    const subject: ErasureSubject = kind === 'traceIds' ? { traceIds: text.split(/[\s,]+/).filter((id) => id !== '') } : kind === 'userId' ? { userId: text } : { sessionId: text }
    const what = 'traceIds' in subject ? `${subject.traceIds.length} traces` : 'userId' in subject ? `user ${subject.userId}` : `session ${subject.sessionId}`
    if (!window.confirm(`Erase everything stored about ${what}: spans, summaries, scores, judgments and dataset items taken from them? This cannot be undone.`)) return
    request.mutate(subject, { onSuccess: () => setValue('') })
  }

  return (
    <div className="erasures">
      <form className="form" onSubmit={submit} aria-label="Request an erasure">
        <label>
          <span>Erase</span>
          <select value={kind} onChange={(event) => setKind(event.target.value as SubjectKind)}>
            {(Object.keys(kindLabels) as SubjectKind[]).map((option) => (
              <option key={option} value={option}>
                {kindLabels[option]}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{kind === 'traceIds' ? 'Trace ids (32 hex each, separated by spaces or commas)' : kind === 'userId' ? 'User id' : 'Session id'}</span>
          {kind === 'traceIds' ? (
            <textarea required rows={3} value={value} onChange={(event) => setValue(event.target.value)} />
          ) : (
            <input required maxLength={1024} value={value} onChange={(event) => setValue(event.target.value)} />
          )}
        </label>
        {request.isError && <ErrorMessage error={request.error} what="the erasure" />}
        <button type="submit" className="button danger" disabled={request.isPending || value.trim() === ''}>
          Erase
        </button>
      </form>
      {erasures.isPending && <Loading label="Loading erasure requests" />}
      {erasures.isError && <ErrorMessage error={erasures.error} what="erasure requests" />}
      {erasures.data && erasures.data.length > 0 && (
        <table className="list-table" aria-label="Erasure requests">
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">Requested</th>
              <th scope="col">Status</th>
              <th scope="col">Deleted</th>
            </tr>
          </thead>
          <tbody>
            {erasures.data.map((erasure) => (
              <tr key={erasure.id}>
                <td>{subjectOf(erasure)}</td>
                <td>{formatTime(erasure.createdAt)}</td>
                <td>
                  <span className={erasure.status === 'completed' ? 'badge' : 'badge muted'}>{statusLabels[erasure.status]}</span>
                  {erasure.completedAt && <span className="muted small"> {formatTime(erasure.completedAt)}</span>}
                </td>
                <td>{deletedText(erasure)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
