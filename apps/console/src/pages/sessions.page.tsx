import { createColumnHelper, useTable, type SortingState } from '@tanstack/react-table'
import { useCallback, useMemo, useState, type FormEvent } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { useSessionList } from '../api/sessions.api.ts'
import type { SessionSummary } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { OwnCallsSwitch, useOwnCallsParam } from '../components/own-calls-switch.tsx'
import { ErrorMessage } from '../components/status.tsx'
import { gridFeatures, VirtualGrid } from '../components/virtual-grid.tsx'
import { formatCost, formatCostExact, formatCount, formatTime } from '../lib/format.ts'
import { timeRanges, type TimeRange } from '../lib/trace-filters.ts'
import { SummariesLag } from '../components/summaries-lag.tsx'

const helper = createColumnHelper<typeof gridFeatures, SessionSummary>()

export default function SessionsPage() {
  const { projectId } = useProject()
  const [params, setParams] = useSearchParams()
  const navigate = useNavigate()
  const user = params.get('user') ?? undefined
  const rangeParam = params.get('range')
  const range = rangeParam !== null && rangeParam in timeRanges ? (rangeParam as TimeRange) : undefined
  // The window's start is fixed when the filter is chosen, so the query key stays put.
  const from = useMemo(() => (range ? new Date(Date.now() - timeRanges[range]).toISOString() : undefined), [range])
  const [ownCalls, setOwnCalls] = useOwnCallsParam()
  const list = useSessionList(projectId, { from, user, includeTracewellCalls: ownCalls })
  const sessions = useMemo(() => list.data?.pages.flatMap((page) => page.sessions) ?? [], [list.data])
  const [sorting, setSorting] = useState<SortingState>([{ id: 'lastSeen', desc: true }])
  const [userDraft, setUserDraft] = useState(user ?? '')

  const columns = useMemo(
    () =>
      helper.columns([
        helper.accessor('sessionId', {
          header: 'Session',
          sortFn: 'alphanumeric',
          cell: (info) => (
            <Link className="cell-link" tabIndex={-1} to={projectPath(`/sessions/${encodeURIComponent(info.getValue())}`, projectId)}>
              {info.getValue()}
            </Link>
          ),
          meta: { width: 'minmax(120px, 2fr)', minPx: 130 },
        }),
        helper.accessor((session) => session.userId ?? '', { id: 'user', header: 'User', sortFn: 'alphanumeric', cell: (info) => info.getValue() || '—', meta: { width: 'minmax(100px, 1fr)', minPx: 100, priority: 2 } }),
        helper.accessor('firstSeen', { header: 'Started', sortFn: 'basic', cell: (info) => formatTime(info.getValue()), meta: { width: 'minmax(165px, 11.5rem)', minPx: 165, priority: 3 } }),
        helper.accessor('lastSeen', { header: 'Last activity', sortFn: 'basic', cell: (info) => formatTime(info.getValue()), meta: { width: 'minmax(165px, 11.5rem)', minPx: 165 } }),
        helper.accessor('traceCount', { header: 'Traces', sortFn: 'basic', cell: (info) => formatCount(info.getValue()), meta: { width: 'minmax(60px, 5rem)', align: 'end', minPx: 60, priority: 2 } }),
        helper.accessor((session) => session.totalTokens ?? null, { id: 'tokens', header: 'Tokens', sortFn: 'basic', cell: (info) => formatCount(info.getValue()), meta: { width: 'minmax(68px, 6rem)', align: 'end', minPx: 68, priority: 3 } }),
        helper.accessor((session) => session.costUsd ?? null, { id: 'cost', header: 'Cost', sortFn: 'basic', cell: (info) => <span title={formatCostExact(info.getValue())}>{formatCost(info.getValue())}</span>, meta: { width: 'minmax(84px, 6.5rem)', align: 'end', minPx: 84, priority: 2 } }),
      ]),
    [projectId],
  )
  const table = useTable({ features: gridFeatures, columns, data: sessions, getRowId: (session) => session.sessionId, state: { sorting }, onSortingChange: setSorting })

  const sortBy = (id: string) => setSorting(([current]) => [{ id, desc: current?.id === id ? !current.desc : true }])
  const open = useCallback((session: SessionSummary) => navigate(projectPath(`/sessions/${encodeURIComponent(session.sessionId)}`, projectId)), [navigate, projectId])
  const loadMore = useCallback(() => void list.fetchNextPage(), [list])

  function applyFilters(event: FormEvent) {
    event.preventDefault()
    const next = new URLSearchParams(params)
    if (userDraft.trim()) next.set('user', userDraft.trim())
    else next.delete('user')
    setParams(next)
  }

  return (
    <section className="page" aria-labelledby="sessions-title">
      <div className="page-header">
        <h1 id="sessions-title">Sessions</h1>
        <span className="muted">Conversations: the traces that share a session id.</span>
        <OwnCallsSwitch on={ownCalls} onChange={setOwnCalls} />
        <SummariesLag projectId={projectId} />
      </div>
      <form className="filters" role="search" aria-label="Session filters" onSubmit={applyFilters}>
        <div className="filter-row">
          <label>
            <span>User</span>
            <input value={userDraft} onChange={(event) => setUserDraft(event.target.value)} />
          </label>
          <label>
            <span>Time</span>
            <select
              value={range ?? ''}
              onChange={(event) => {
                const next = new URLSearchParams(params)
                if (event.target.value) next.set('range', event.target.value)
                else next.delete('range')
                setParams(next)
              }}
            >
              <option value="">All time</option>
              <option value="1h">Last hour</option>
              <option value="24h">Last 24 hours</option>
              <option value="7d">Last 7 days</option>
              <option value="30d">Last 30 days</option>
            </select>
          </label>
          <div className="filter-actions">
            <button type="submit" className="button primary">
              Apply
            </button>
          </div>
        </div>
      </form>
      {list.isError ? (
        <ErrorMessage error={list.error} what="sessions" />
      ) : (
        <VirtualGrid
          table={table}
          label="Sessions"
          onOpen={open}
          onSort={sortBy}
          hasMore={Boolean(list.hasNextPage)}
          isFetchingMore={list.isFetchingNextPage}
          loadMore={loadMore}
          empty={list.isPending ? 'Loading sessions…' : <p>No sessions. Spans carry a session id in attributes such as <code>session.id</code>.</p>}
        />
      )}
    </section>
  )
}
