import { useMemo } from 'react'
import { llmCallOf } from '@tracewell/llm-messages'
import { Link } from 'react-router'
import type { Score, Span } from '../api/types.ts'
import { formatCost, formatCount, formatDuration, formatTime, spanKindName } from '../lib/format.ts'
import { nanosToMicros } from '../lib/span-tree.ts'
import { AddToDataset } from './add-to-dataset.tsx'
import { AttributeTable } from './attribute-table.tsx'
import { ConversationView } from './conversation-view.tsx'
import { projectPath } from './project-scope.tsx'
import { ScorePanel } from './score-panel.tsx'

const statusNames = ['unset', 'ok', 'error']
const costSources = { attribute: 'reported by the application', custom_price: "the project's price", price_table: 'price table' } as const

/** Everything about one span: what it was, its LLM call as a chat, then its raw data. */
/** One span in full. With `projectId` null (a share link's page) it is read-only: no scoring, no dataset, no links into the project. */
export function SpanPanel({ span, traceStartMicros, projectId, scores = [] }: { span: Span; traceStartMicros: number; projectId: string | null; scores?: Score[] }) {
  const call = useMemo(() => llmCallOf(span), [span])
  const durationMs = nanosToMicros(span.durationNs) / 1000
  const offsetMs = (nanosToMicros(span.startTimeUnixNano) - traceStartMicros) / 1000
  const isError = span.status?.code === 2

  return (
    <article className="span-panel" aria-labelledby="span-title">
      <header>
        <h2 id="span-title">{span.name}</h2>
        <div className="span-facts">
          <span className={isError ? 'badge error' : span.status?.code === 1 ? 'badge ok' : 'badge neutral'} title="status">
            {statusNames[span.status?.code ?? 0] ?? span.status?.code}
          </span>
          <span className="tag">{spanKindName(span.kind)}</span>
          {span.serviceName && (
            <span className="tag">
              {span.serviceName}
              {span.serviceVersion ? `@${span.serviceVersion}` : ''}
            </span>
          )}
        </div>
        {isError && span.status.message && (
          <p className="error-message" role="note">
            {span.status.message}
          </p>
        )}
        <dl className="facts">
          <dt>Duration</dt>
          <dd>{formatDuration(durationMs)}</dd>
          <dt>Started</dt>
          <dd>
            {formatTime(span.startTime)} (+{offsetMs === 0 ? '0' : formatDuration(offsetMs)})
          </dd>
          <dt>Span id</dt>
          <dd>
            <code>{span.spanId}</code>
          </dd>
          {span.parentSpanId && (
            <>
              <dt>Parent</dt>
              <dd>
                <code>{span.parentSpanId}</code>
              </dd>
            </>
          )}
          {span.scopeName && (
            <>
              <dt>Scope</dt>
              <dd>
                {span.scopeName}
                {span.scopeVersion ? ` ${span.scopeVersion}` : ''}
              </dd>
            </>
          )}
        </dl>
      </header>

      {call && (
        <section aria-labelledby="llm-title" className="panel-section">
          <h3 id="llm-title">LLM call</h3>
          <dl className="facts">
            <dt>Model</dt>
            <dd>
              {call.model ?? '—'}
              {call.responseModel && call.responseModel !== call.model ? ` → ${call.responseModel}` : ''}
            </dd>
            {call.vendor && (
              <>
                <dt>Vendor</dt>
                <dd>{call.vendor}</dd>
              </>
            )}
            {call.requestType && (
              <>
                <dt>Request</dt>
                <dd>{call.requestType}</dd>
              </>
            )}
            <dt>Tokens</dt>
            <dd>
              {formatCount(call.tokens.input)} in · {formatCount(call.tokens.output)} out · {formatCount(call.tokens.total)} total
              {call.tokens.cachedInput ? ` · ${formatCount(call.tokens.cachedInput)} cached` : ''}
              {call.tokens.cacheWrite ? ` · ${formatCount(call.tokens.cacheWrite)} written to cache` : ''}
              {call.tokens.reasoning ? ` · ${formatCount(call.tokens.reasoning)} reasoning` : ''}
              {call.estimated ? <EstimatedMark /> : null}
            </dd>
            <dt>Cost</dt>
            <dd>
              {formatCost(call.cost.total)}
              {call.cost.input != null || call.cost.output != null ? ` (${formatCost(call.cost.input)} in, ${formatCost(call.cost.output)} out)` : ''}
              {call.cost.source ? <span className="muted"> · {costSources[call.cost.source]}</span> : null}
              {call.estimated && call.cost.total != null ? <EstimatedMark /> : null}
            </dd>
          </dl>
          {call.conversation ? <ConversationView conversation={call.conversation} /> : <p className="muted">No messages were recorded on this span.</p>}
          {call.conversation && projectId !== null && <AddToDataset key={span.spanId} projectId={projectId} traceId={span.traceId} spanId={span.spanId} />}
        </section>
      )}

      {projectId !== null && <ScorePanel key={span.spanId} projectId={projectId} traceId={span.traceId} spanId={span.spanId} scores={scores} subject="this span" />}

      <details className="panel-section" open={!call}>
        <summary>
          <h3>Attributes</h3> <span className="muted">{Object.keys(span.attributes ?? {}).length}</span>
        </summary>
        <AttributeTable attributes={span.attributes} label="Span attributes" />
      </details>
      <details className="panel-section">
        <summary>
          <h3>Resource</h3> <span className="muted">{Object.keys(span.resourceAttributes ?? {}).length}</span>
        </summary>
        <AttributeTable attributes={span.resourceAttributes} label="Resource attributes" />
      </details>
      <details className="panel-section" open={span.events.length > 0 && span.events.length <= 3}>
        <summary>
          <h3>Events</h3> <span className="muted">{span.events.length}</span>
        </summary>
        {span.events.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <ol className="events">
            {span.events.map((event, index) => (
              <li key={index}>
                <div className="event-head">
                  <strong>{event.name || '(unnamed)'}</strong>
                  {event.timeUnixNano && <span className="muted">+{formatDuration((nanosToMicros(event.timeUnixNano) - traceStartMicros) / 1000)}</span>}
                </div>
                <AttributeTable attributes={event.attributes} label={`Attributes of event ${event.name ?? index}`} />
              </li>
            ))}
          </ol>
        )}
      </details>
      <details className="panel-section">
        <summary>
          <h3>Links</h3> <span className="muted">{span.links.length}</span>
        </summary>
        {span.links.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <ol className="events">
            {span.links.map((link, index) => (
              <li key={index}>
                {link.traceId && projectId !== null ? (
                  <Link to={projectPath(`/traces/${link.traceId}`, projectId, link.spanId ? { span: link.spanId } : {})}>
                    <code>{link.traceId}</code> / <code>{link.spanId}</code>
                  </Link>
                ) : (
                  <code>{link.spanId}</code>
                )}
                <AttributeTable attributes={link.attributes} label={`Attributes of link ${index + 1}`} />
              </li>
            ))}
          </ol>
        )}
      </details>
    </article>
  )
}

/** The counts are the instrumentation's estimate, not the provider's (docs/semantic-conventions.md, "Estimated tokens"). */
function EstimatedMark() {
  return (
    <span className="muted" title="Counted by the instrumentation (a streamed call), not reported by the provider: not exact">
      {' '}
      · estimated
    </span>
  )
}
