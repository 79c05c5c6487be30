import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useMemo } from 'react'
import { Link, useNavigate, useParams, useSearchParams } from 'react-router'
import { apiPath, apiRequest } from '../api/client.ts'
import { useTrace } from '../api/traces.api.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { AddToDataset } from '../components/add-to-dataset.tsx'
import { CommentThreads } from '../components/comment-threads.tsx'
import { ShareTrace } from '../components/share-trace.tsx'
import { useSession } from '../api/session.api.ts'
import { useCan } from '../components/can.tsx'
import { ScorePanel } from '../components/score-panel.tsx'
import { SpanPanel } from '../components/span-panel.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { TraceSummaryStrip } from '../components/trace-summary-strip.tsx'
import { Waterfall } from '../components/waterfall.tsx'
import { scoresOf } from '../lib/score-format.ts'
import { buildWaterfall } from '../lib/span-tree.ts'
import { Can } from '../components/can.tsx'

export default function TracePage() {
  const { traceId = '' } = useParams()
  const { projectId } = useProject()
  const [params, setParams] = useSearchParams()
  const trace = useTrace(projectId, traceId)
  const waterfall = useMemo(() => buildWaterfall(trace.data?.spans ?? []), [trace.data])
  const navigate = useNavigate()
  const client = useQueryClient()
  const session = useSession()
  const person = session.data?.kind === 'person' ? (session.data.user ?? null) : null
  const canShare = useCan('traces:share', projectId)
  const canComment = useCan('comments:write', projectId)
  const remove = useMutation({
    mutationFn: () => apiRequest<void>('DELETE', apiPath(`/api/traces/${traceId}`, { project_id: projectId })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['traces', projectId] })
      navigate(projectPath('/traces', projectId))
    },
  })

  if (trace.isPending) return <Loading label="Loading the trace" />
  if (trace.isError) return <ErrorMessage error={trace.error} what={`trace ${traceId}`} />

  // The span in the URL, else the root, so a link can point at one span.
  const selectedId = params.get('span') ?? waterfall.rows[0]?.span.spanId ?? null
  const selected = waterfall.rows.find((row) => row.span.spanId === selectedId)?.span
  const root = waterfall.rows[0]?.span
  const select = (spanId: string) => {
    const next = new URLSearchParams(params)
    next.set('span', spanId)
    setParams(next, { replace: true })
  }

  return (
    <section className="page trace-page" aria-labelledby="trace-title">
      <div className="page-header">
        <Link to={projectPath('/traces', projectId)} className="back">
          ← Traces
        </Link>
        <h1 id="trace-title">{root?.name ?? traceId}</h1>
        <span className="muted">
          <code>{traceId}</code>
        </span>
      </div>
      <TraceSummaryStrip waterfall={waterfall}>
        <div className="strip-actions">
          <AddToDataset projectId={projectId} traceId={traceId} />
          {canShare && <ShareTrace projectId={projectId} traceId={traceId} />}
          <a className="button" href={apiPath(`/api/traces/${traceId}/otlp`, { project_id: projectId })} download={`trace-${traceId}.json`}>
            Download OTLP JSON
          </a>
          <Can permission="traces:delete">
            <button
              type="button"
              className="button danger"
              disabled={remove.isPending}
              onClick={() => {
                if (window.confirm('Delete this trace and all its spans? This cannot be undone.')) remove.mutate()
              }}
            >
              Delete trace
            </button>
          </Can>
        </div>
      </TraceSummaryStrip>
      {remove.isError && <ErrorMessage error={remove.error} what="the deletion" />}
      <ScorePanel projectId={projectId} traceId={traceId} scores={scoresOf(trace.data.scores, null)} subject="this trace" />
      {person && <CommentThreads target={{ projectId, objectType: 'trace', objectId: traceId }} meId={person.id} canComment={canComment} />}
      <div className="trace-split">
        <Waterfall waterfall={waterfall} selectedSpanId={selectedId} onSelect={select} />
        {selected ? <SpanPanel span={selected} traceStartMicros={waterfall.startMicros} projectId={projectId} scores={scoresOf(trace.data.scores, selected.spanId)} /> : <p className="muted">Choose a span.</p>}
      </div>
    </section>
  )
}
