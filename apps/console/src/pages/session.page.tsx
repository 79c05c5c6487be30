import { llmCallOf } from '@tracewell/llm-messages'
import { Link, useParams } from 'react-router'
import { useSessionDetail, useSessionTraces } from '../api/sessions.api.ts'
import type { Trace, TraceSummary } from '../api/types.ts'
import { ConversationView } from '../components/conversation-view.tsx'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatCost, formatCount, formatDuration, formatTime } from '../lib/format.ts'
import { buildWaterfall, nanosToMicros } from '../lib/span-tree.ts'

// A session's conversation reads every trace in full; past this many, the rest are listed as links.
const tracesRead = 50

export default function SessionPage() {
  const { sessionId = '' } = useParams()
  const { projectId } = useProject()
  const detail = useSessionDetail(projectId, sessionId)
  const traces = detail.data?.traces ?? []
  const full = useSessionTraces(projectId, traces.slice(0, tracesRead).map((trace) => trace.traceId))

  if (detail.isPending) return <Loading label="Loading the session" />
  if (detail.isError) return <ErrorMessage error={detail.error} what={`session ${sessionId}`} />

  const tokens = traces.reduce((sum, trace) => sum + (trace.totalTokens ?? 0), 0)
  const cost = traces.some((trace) => trace.costUsd != null) ? traces.reduce((sum, trace) => sum + (trace.costUsd ?? 0), 0) : null

  return (
    <section className="page" aria-labelledby="session-title">
      <div className="page-header">
        <Link to={projectPath('/sessions', projectId)} className="back">
          ← Sessions
        </Link>
        <h1 id="session-title">Session {sessionId}</h1>
      </div>
      <dl className="summary-strip">
        <div>
          <dt>User</dt>
          <dd>{detail.data.userId ?? '—'}</dd>
        </div>
        <div>
          <dt>Traces</dt>
          <dd>{formatCount(traces.length)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{formatCount(tokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{formatCost(cost)}</dd>
        </div>
      </dl>
      <ol className="session-turns" aria-label="The session's traces, oldest first">
        {traces.map((summary, index) => (
          <SessionTurn key={summary.traceId} summary={summary} trace={index < tracesRead ? full[index]?.data : undefined} loading={index < tracesRead && Boolean(full[index]?.isPending)} projectId={projectId} />
        ))}
      </ol>
    </section>
  )
}

function SessionTurn({ summary, trace, loading, projectId }: { summary: TraceSummary; trace: Trace | undefined; loading: boolean; projectId: string }) {
  // The trace's LLM calls in the order they ran, each as its chat.
  const calls = trace
    ? buildWaterfall(trace.spans)
        .rows.map((row) => ({ span: row.span, conversation: llmCallOf(row.span)?.conversation ?? null }))
        .filter((call) => call.conversation !== null)
        .sort((a, b) => nanosToMicros(a.span.startTimeUnixNano) - nanosToMicros(b.span.startTimeUnixNano))
    : []
  return (
    <li className="card session-turn">
      <div className="turn-head">
        <Link to={projectPath(`/traces/${summary.traceId}`, projectId)}>{summary.name || summary.traceId}</Link>
        <span className="muted">
          {formatTime(summary.startTime)} · {formatDuration(summary.durationMs)}
          {summary.models.length > 0 ? ` · ${summary.models.join(', ')}` : ''}
        </span>
      </div>
      {loading && <p className="muted">Loading its messages…</p>}
      {calls.map(({ span, conversation }) => (
        <div key={span.spanId} className="turn-call">
          <Link className="muted small" to={projectPath(`/traces/${summary.traceId}`, projectId, { span: span.spanId })}>
            {span.name}
            {span.llmModel ? ` · ${span.llmModel}` : ''}
          </Link>
          {conversation && <ConversationView conversation={conversation} />}
        </div>
      ))}
      {trace && calls.length === 0 && <p className="muted">No LLM messages in this trace.</p>}
    </li>
  )
}
