import { createColumnHelper, useTable, type SortingState } from '@tanstack/react-table'
import { useCallback, useMemo, useRef } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { useEvaluatorNames } from '../api/evaluators.api.ts'
import { useTraceList } from '../api/traces.api.ts'
import type { TraceSummary } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { OwnCallsSwitch, SelfBadge, selfServiceName } from '../components/own-calls-switch.tsx'
import { SavedViews } from '../components/saved-views.tsx'
import { useSession } from '../api/session.api.ts'
import { useCan } from '../components/can.tsx'
import { ErrorMessage } from '../components/status.tsx'
import { SummariesLag } from '../components/summaries-lag.tsx'
import { TraceFilterForm } from '../components/trace-filter-form.tsx'
import { gridFeatures, VirtualGrid } from '../components/virtual-grid.tsx'
import { formatCost, formatCostExact, formatCount, formatDuration, formatTime } from '../lib/format.ts'
import { ScoreValue } from '../components/score-value.tsx'
import { CommentsIcon } from '../components/comments-icon.tsx'
import { authorText } from '../lib/score-format.ts'
import { readTraceFilters, serverSorts, writeTraceFilters, type TraceFilters, type TraceSort } from '../lib/trace-filters.ts'

const helper = createColumnHelper<typeof gridFeatures, TraceSummary>()

/** The average number of the trace's scores of this name (null without one). */
function averageOf(trace: TraceSummary, name: string): number | null {
  const numbers = (trace.scores ?? []).filter((score) => score.name === name && score.numericValue !== null).map((score) => score.numericValue as number)
  return numbers.length === 0 ? null : numbers.reduce((sum, n) => sum + n, 0) / numbers.length
}

const tokensOf = (trace: TraceSummary) => trace.totalTokens ?? (trace.inputTokens != null || trace.outputTokens != null ? (trace.inputTokens ?? 0) + (trace.outputTokens ?? 0) : null)
const errorsOf = (trace: TraceSummary) => trace.errorCount ?? 0

/** Sorting a column by itself starts with the order a person looks for first. */
const ascendingFirst = new Set<TraceSort>(['name', 'service', 'models'])

export default function TracesPage() {
  const { projectId } = useProject()
  const [params, setParams] = useSearchParams()
  const navigate = useNavigate()
  const filters = useMemo(() => readTraceFilters(params), [params])
  const list = useTraceList(projectId, filters)
  const seen = useRef<Set<string> | null>(null)
  const evaluatorNames = useEvaluatorNames(projectId)
  const signedInPerson = useSession().data?.kind === 'person'
  const canShareViews = useCan('views:share', projectId)

  const traces = useMemo(() => list.data?.pages.flatMap((page) => page.traces) ?? [], [list.data])

  // In live mode, traces that were not on the list a moment ago are marked as they arrive.
  const fresh = useMemo(() => {
    const previous = seen.current
    const ids = new Set(traces.map((trace) => trace.traceId))
    seen.current = ids
    if (!filters.live || previous === null) return new Set<string>()
    return new Set([...ids].filter((id) => !previous.has(id)))
  }, [traces, filters.live])

  const apply = useCallback((next: TraceFilters) => setParams(writeTraceFilters(next, params)), [params, setParams])

  const columns = useMemo(
    () =>
      helper.columns([
        helper.accessor('startTime', { id: 'time', header: 'Time', cell: (info) => <time dateTime={info.getValue()}>{formatTime(info.getValue())}</time>, meta: { width: 'minmax(165px, 11.5rem)', minPx: 165 } }),
        helper.accessor('name', {
          id: 'name',
          header: 'Root span',
          sortFn: 'alphanumeric',
          cell: (info) => (
            <Link to={projectPath(`/traces/${info.row.original.traceId}`, projectId)} className="cell-link" tabIndex={-1}>
              {info.getValue() || '(no root)'}
            </Link>
          ),
          meta: { width: 'minmax(120px, 2fr)', minPx: 130 },
        }),
        helper.accessor((trace) => trace.serviceName ?? '', {
          id: 'service',
          header: 'Service',
          sortFn: 'alphanumeric',
          cell: (info) => (info.getValue() === selfServiceName ? <SelfBadge /> : info.getValue() || '—'),
          meta: { width: 'minmax(100px, 1fr)', minPx: 100, priority: 3 },
        }),
        helper.accessor((trace) => trace.models.join(', '), {
          id: 'models',
          header: 'Models',
          sortFn: 'alphanumeric',
          cell: (info) => (
            <span className="models" title={info.row.original.models.join(', ') || undefined}>
              {info.row.original.models.length === 0 ? '—' : info.row.original.models.map((model) => <span key={model} className="tag">{model}</span>)}
            </span>
          ),
          meta: { width: 'minmax(120px, 1.3fr)', minPx: 120, priority: 2 },
        }),
        helper.accessor('durationMs', { id: 'duration', header: 'Duration', cell: (info) => formatDuration(info.getValue()), meta: { width: 'minmax(76px, 6.5rem)', align: 'end', minPx: 76, priority: 2 } }),
        helper.accessor('spanCount', { id: 'spans', header: 'Spans', sortFn: 'basic', cell: (info) => formatCount(info.getValue()), meta: { width: 'minmax(56px, 4.5rem)', align: 'end', minPx: 56, priority: 3 } }),
        helper.accessor((trace) => tokensOf(trace), { id: 'tokens', header: 'Tokens', cell: (info) => formatCount(info.getValue()), meta: { width: 'minmax(68px, 5.5rem)', align: 'end', minPx: 68, priority: 3 } }),
        helper.accessor((trace) => trace.costUsd ?? null, { id: 'cost', header: 'Cost', cell: (info) => <span title={formatCostExact(info.getValue())}>{formatCost(info.getValue())}</span>, meta: { width: 'minmax(96px, 7rem)', align: 'end', minPx: 96, priority: 2 } }),
        helper.accessor((trace) => errorsOf(trace), {
          id: 'status',
          header: 'Status',
          sortFn: 'basic',
          cell: (info) =>
            info.row.original.errorCount === undefined ? (
              '—'
            ) : info.getValue() > 0 ? (
              <span className="badge error">{info.getValue() === 1 ? 'error' : `${info.getValue()} errors`}</span>
            ) : (
              <span className="badge ok">ok</span>
            ),
          meta: { width: 'minmax(84px, 6rem)', minPx: 84 },
        }),
        helper.accessor((trace) => trace.commentCount ?? 0, {
          id: 'comments',
          header: () => <CommentsIcon />,
          enableSorting: false,
          cell: (info) => (info.getValue() > 0 ? <span title={`${info.getValue()} comments on this trace`}>{formatCount(info.getValue())}</span> : ''),
          meta: { width: 'minmax(48px, 4rem)', align: 'end', minPx: 48, priority: 3 },
        }),
        // Sorted by the server, by the average of the filtered score; without a score filter there
        // is no one score to sort by.
        helper.accessor((trace) => (filters.scoreName ? averageOf(trace, filters.scoreName) : null), {
          id: 'score',
          header: filters.scoreName ? `Scores (${filters.scoreName})` : 'Scores',
          enableSorting: Boolean(filters.scoreName),
          cell: (info) => {
            // The score the list is filtered or sorted by comes first.
            const scores = [...(info.row.original.scores ?? [])].sort((a, b) => Number(b.name === filters.scoreName) - Number(a.name === filters.scoreName))
            if (scores.length === 0) return '—'
            return (
              <span className="models">
                {scores.slice(0, 3).map((score) => (
                  <span key={score.id} className="tag score-tag" title={`${score.name} (${[score.source, authorText(score, evaluatorNames)].filter(Boolean).join(', ')})${score.comment ? `: ${score.comment}` : ''}`}>
                    {score.name} <ScoreValue score={score} />
                  </span>
                ))}
                {scores.length > 3 && <span className="muted">+{scores.length - 3}</span>}
              </span>
            )
          },
          // Filtered, the header names the score, and the sort arrow follows it.
          meta: filters.scoreName ? { width: 'minmax(190px, 1.8fr)', minPx: 190, priority: 2 } : { width: 'minmax(140px, 1.6fr)', minPx: 140, priority: 2 },
        }),
      ]),
    [projectId, filters.scoreName, evaluatorNames],
  )

  const sorting: SortingState = useMemo(() => [{ id: filters.sort, desc: filters.order === 'desc' }], [filters.sort, filters.order])
  const serverSorted = (serverSorts as readonly string[]).includes(filters.sort) && (filters.sort !== 'score' || Boolean(filters.scoreName))
  const table = useTable({
    features: gridFeatures,
    columns,
    data: traces,
    getRowId: (trace) => trace.traceId,
    state: { sorting },
    // The server already sorted by time, duration, tokens and cost over every matching trace;
    // the other columns sort the traces loaded so far.
    manualSorting: serverSorted,
  })

  function sortBy(columnId: string) {
    const sort = columnId as TraceSort
    const order = filters.sort === sort ? (filters.order === 'desc' ? 'asc' : 'desc') : ascendingFirst.has(sort) ? 'asc' : 'desc'
    apply({ ...filters, sort, order })
  }

  const openTrace = useCallback((trace: TraceSummary) => navigate(projectPath(`/traces/${trace.traceId}`, projectId)), [navigate, projectId])
  const loadMore = useCallback(() => void list.fetchNextPage(), [list])

  return (
    <section className="page traces-page" aria-labelledby="traces-title">
      <div className="page-header">
        <h1 id="traces-title">Traces</h1>
        <button type="button" className={filters.live ? 'button live on' : 'button live'} aria-pressed={filters.live} onClick={() => apply({ ...filters, live: !filters.live })}>
          <span className="live-dot" aria-hidden="true" /> Live
        </button>
        <OwnCallsSwitch on={filters.includeTracewellCalls} onChange={(on) => apply({ ...filters, includeTracewellCalls: on })} />
        {!serverSorted && <span className="muted">Sorted by {filters.sort} within the loaded traces</span>}
        <SummariesLag projectId={projectId} />
        {signedInPerson && <SavedViews projectId={projectId} canShare={canShareViews} />}
      </div>
      <TraceFilterForm key={params.toString()} filters={filters} onApply={apply} />
      {list.isError ? (
        <ErrorMessage error={list.error} what="traces" />
      ) : (
        <VirtualGrid
          table={table}
          label="Traces"
          onOpen={openTrace}
          onSort={sortBy}
          hasMore={!filters.live && Boolean(list.hasNextPage)}
          isFetchingMore={list.isFetchingNextPage}
          loadMore={loadMore}
          rowClassName={(trace) => [errorsOf(trace) > 0 ? 'has-error' : undefined, fresh.has(trace.traceId) ? 'fresh' : undefined].filter(Boolean).join(' ') || undefined}
          empty={
            list.isPending ? 'Loading traces…' : (
              <>
                <p>No traces match.</p>
                <p className="muted">Send some with the project key (see the README), or clear the filters.</p>
              </>
            )
          }
        />
      )}
    </section>
  )
}
