import { useMemo, useState, type FormEvent } from 'react'
import { useSearchParams } from 'react-router'
import { permissions } from '@tracewell/policy'
import { useAuditLog } from '../api/audit-log.api.ts'
import { useSession } from '../api/session.api.ts'
import type { AuditEntry } from '../api/types.ts'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { rangeLabels } from '../components/trace-filter-form.tsx'
import { formatTime } from '../lib/format.ts'
import { timeRanges, type TimeRange } from '../lib/trace-filters.ts'

// The team's audit log (docs/accounts.md#audit-log): who changed what, when, from where, and for
// settings what they were before and after. Filters live in the address, so a filtered view can
// be shared.

const ranges: readonly TimeRange[] = ['1h', '24h', '7d', '30d']

/** The resources a change can be about: those of the matrix's permissions that are not reads. */
const resourceTypes = [...new Set(Object.keys(permissions).filter((permission) => !permission.endsWith(':read')).map((permission) => permission.split(':')[0] ?? permission))].sort()

const actorKinds: Record<AuditEntry['actor']['kind'], string> = { user: 'person', 'team-key': 'team key', 'project-key': 'project key' }

export default function AuditLogPage() {
  const session = useSession()
  const [params, setParams] = useSearchParams()
  const rangeParam = params.get('range')
  const range = rangeParam !== null && rangeParam in timeRanges ? (rangeParam as TimeRange) : undefined
  const actor = params.get('actor') ?? undefined
  const resourceType = params.get('resource') ?? undefined
  const action = params.get('action') ?? undefined
  // Computed once per choice of range, so the query's key (and its pages) stay put while it is shown.
  const from = useMemo(() => (range ? new Date(Date.now() - timeRanges[range]).toISOString() : undefined), [range])
  const log = useAuditLog(session.data?.teamId ?? '', { actor, action, resourceType, from })
  const [actionDraft, setActionDraft] = useState(action ?? '')
  const entries = log.data?.pages.flatMap((page) => page.entries) ?? []

  const setParam = (name: string, value: string | undefined) => {
    const next = new URLSearchParams(params)
    if (value) next.set(name, value)
    else next.delete(name)
    setParams(next)
  }
  const applyAction = (event: FormEvent) => {
    event.preventDefault()
    setParam('action', actionDraft.trim() || undefined)
  }

  return (
    <section className="page" aria-labelledby="audit-title">
      <div className="page-header">
        <h1 id="audit-title">Audit log</h1>
        <span className="muted">Every change made through the API or the console: who, what, when and from where; settings with what they were before.</span>
      </div>
      <form className="filters" role="search" aria-label="Audit log filters" onSubmit={applyAction}>
        <div className="filter-row">
          <label>
            <span>Resource</span>
            <select value={resourceType ?? ''} onChange={(event) => setParam('resource', event.target.value || undefined)}>
              <option value="">Any</option>
              {resourceTypes.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Action</span>
            <input value={actionDraft} onChange={(event) => setActionDraft(event.target.value)} placeholder="setRetentionPolicy" spellCheck={false} />
          </label>
          <label>
            <span>Time</span>
            <select value={range ?? ''} onChange={(event) => setParam('range', event.target.value || undefined)}>
              <option value="">All kept</option>
              {ranges.map((choice) => (
                <option key={choice} value={choice}>
                  {rangeLabels[choice]}
                </option>
              ))}
            </select>
          </label>
          <div className="filter-actions">
            <button type="submit" className="button primary">
              Apply
            </button>
            {actor && (
              <button type="button" className="button" onClick={() => setParam('actor', undefined)}>
                Everyone’s changes
              </button>
            )}
          </div>
        </div>
      </form>
      {log.isPending && <Loading label="Loading the audit log" />}
      {log.isError && <ErrorMessage error={log.error} what="the audit log" />}
      {log.isSuccess && entries.length === 0 && <Empty>No change recorded{actor || action || resourceType || range ? ' that matches these filters' : ' yet'}.</Empty>}
      {entries.length > 0 && (
        <table className="list-table audit-log" aria-label="Audit log">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Resource</th>
              <th scope="col">From</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <AuditRow key={entry.id} entry={entry} onActor={() => setParam('actor', entry.actor.id)} />
            ))}
          </tbody>
        </table>
      )}
      {log.hasNextPage && (
        <button type="button" className="button" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? 'Loading…' : 'Older changes'}
        </button>
      )}
    </section>
  )
}

function AuditRow({ entry, onActor }: { entry: AuditEntry; onActor: () => void }) {
  const who = entry.actor.name ?? entry.actor.label
  return (
    <tr>
      <td>{formatTime(entry.createdAt)}</td>
      <td>
        <button type="button" className="link-button" title={`Only the changes of ${who}`} onClick={onActor}>
          {who}
        </button>
        <div className="muted small">{entry.actor.kind === 'user' ? entry.actor.label : actorKinds[entry.actor.kind]}</div>
      </td>
      <td>
        <code>{entry.action}</code>
        <div className="muted small">
          {entry.method} {entry.route}
        </div>
      </td>
      <td>
        <span className="tag small">{entry.resourceType}</span> {entry.resourceId && <code className="small">{entry.resourceId}</code>}
        {entry.projectId && entry.projectId !== entry.resourceId && <div className="muted small">project {entry.projectId}</div>}
      </td>
      <td>
        <code className="small">{entry.ip ?? '—'}</code>
      </td>
      <td>
        {entry.before === null && entry.after === null ? (
          <span className="muted small">—</span>
        ) : (
          <details className="audit-change">
            <summary>Before and after</summary>
            <div className="audit-change-sides">
              <figure>
                <figcaption>Before</figcaption>
                <pre aria-label="Before">{JSON.stringify(entry.before, null, 2)}</pre>
              </figure>
              <figure>
                <figcaption>After</figcaption>
                <pre aria-label="After">{JSON.stringify(entry.after, null, 2)}</pre>
              </figure>
            </div>
          </details>
        )}
      </td>
    </tr>
  )
}
