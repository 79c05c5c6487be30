import { Can } from '../components/can.tsx'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { useCreateEvaluatorRun, useDeleteEvaluator, useEvaluatorRuns, useEvaluator, useJudgments, useJudgmentScores, useSetEvaluatorEnabled, type JudgmentStatus } from '../api/evaluators.api.ts'
import { useLlmConnections } from '../api/llm-connections.api.ts'
import { usePromptsets } from '../api/prompts.api.ts'
import type { EvaluatorRun, Evaluator, Judgment, Score } from '../api/types.ts'
import { EvaluatorState, JudgmentCountsText } from '../components/evaluator-state.tsx'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ScoreValue } from '../components/score-value.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatCost, formatCostExact, formatCount, formatDuration, formatTime } from '../lib/format.ts'
import { timeRanges, type TimeRange } from '../lib/trace-filters.ts'

// One evaluator: what it judges and how, what it spent, its on-demand runs over past traces, and
// its judgments one by one (status, the score given, the error of a failed one, tokens and cost).

const statusBadge: Record<Judgment['status'], string> = { completed: 'badge ok', failed: 'badge error', pending: 'badge neutral', skipped: 'badge muted' }
const runRanges: Array<{ range: TimeRange; label: string }> = [
  { range: '1h', label: 'the last hour' },
  { range: '24h', label: 'the last 24 hours' },
  { range: '7d', label: 'the last 7 days' },
]

export default function EvaluatorPage() {
  const { projectId } = useProject()
  const { evaluatorId = '' } = useParams()
  const runs = useEvaluatorRuns(projectId, evaluatorId)
  const runUnderWay = (runs.data ?? []).some((run) => run.status !== 'completed')
  const evaluator = useEvaluator(projectId, evaluatorId, runUnderWay)
  if (evaluator.isPending) return <Loading label="Loading the evaluator" />
  if (evaluator.isError) return <ErrorMessage error={evaluator.error} what="the evaluator" />
  return <EvaluatorView projectId={projectId} evaluator={evaluator.data} busy={runUnderWay || evaluator.data.judgments.pending > 0} />
}

function EvaluatorView({ projectId, evaluator, busy }: { projectId: string; evaluator: Evaluator; busy: boolean }) {
  const navigate = useNavigate()
  const setEnabled = useSetEvaluatorEnabled(projectId)
  const remove = useDeleteEvaluator(projectId)
  const connections = useLlmConnections(projectId)
  const [runId, setRunId] = useState<string | undefined>(undefined)
  const connection = connections.data?.find((candidate) => candidate.id === evaluator.connectionId)

  return (
    <section className="page" aria-labelledby="evaluator-title">
      <div className="page-header">
        <Link to={projectPath('/evaluators', projectId)} className="back">
          ← Evaluators
        </Link>
        <h1 id="evaluator-title">{evaluator.name}</h1>
        <EvaluatorState evaluator={evaluator} />
        <span className="topbar-spacer" />
        <Can permission="evaluators:write">
          <button type="button" className="button" disabled={setEnabled.isPending} onClick={() => setEnabled.mutate({ evaluatorId: evaluator.id, enabled: !evaluator.enabled })}>
            {evaluator.enabled ? 'Pause' : 'Resume'}
          </button>
          <button
            type="button"
            className="button danger"
            disabled={remove.isPending}
            onClick={() => {
              if (window.confirm(`Delete the evaluator ${evaluator.name} with its runs and judgments? The scores it gave stay.`)) {
                remove.mutate(evaluator.id, { onSuccess: () => navigate(projectPath('/evaluators', projectId)) })
              }
            }}
          >
            Delete
          </button>
        </Can>
      </div>
      {setEnabled.isError && <ErrorMessage error={setEnabled.error} what="the evaluator" action="change" />}
      {remove.isError && <ErrorMessage error={remove.error} what="the evaluator" action="delete" />}
      <p className="muted lead">{evaluator.enabled ? 'Judges each new trace that matches its filter once the trace is complete.' : 'Paused: new traces are not judged. Runs over past traces still work.'}</p>

      <dl className="summary-strip" aria-label="What it spent">
        <div>
          <dt>Cost</dt>
          <dd title={formatCostExact(evaluator.judge.costUsd)}>{formatCost(evaluator.judge.costUsd)}</dd>
        </div>
        <div>
          <dt>Tokens in / out</dt>
          <dd>
            {formatCount(evaluator.judge.inputTokens)} / {formatCount(evaluator.judge.outputTokens)}
          </dd>
        </div>
        <div>
          <dt>Judgments</dt>
          <dd>
            <JudgmentCountsText counts={evaluator.judgments} />
          </dd>
        </div>
      </dl>

      <dl className="summary-strip" aria-label="How it judges">
        <div>
          <dt>Score</dt>
          <dd>
            <code>{evaluator.scoreName}</code>
          </dd>
        </div>
        <div>
          <dt>Judge</dt>
          <dd>
            {evaluator.model} <span className="muted">via {connection?.name ?? '—'}</span>
          </dd>
        </div>
        <div>
          <dt>Traces</dt>
          <dd>{filterText(evaluator.filter)}</dd>
        </div>
        <div>
          <dt>Share judged</dt>
          <dd>{Math.round(evaluator.samplingRate * 1000) / 10}%</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatTime(evaluator.createdAt)}</dd>
        </div>
      </dl>
      <PromptOf projectId={projectId} evaluator={evaluator} />

      <Runs projectId={projectId} evaluatorId={evaluator.id} chosen={runId} onChoose={setRunId} />
      <Judgments projectId={projectId} evaluator={evaluator} busy={busy} runId={runId} onClearRun={() => setRunId(undefined)} />
    </section>
  )
}

/** The filter in words: `service=api, status=error`, or every trace. */
function filterText(filter: Record<string, unknown>): string {
  const parts = Object.entries(filter).flatMap(([name, value]) => (Array.isArray(value) ? value.map((item) => `${name === 'attr' ? '' : `${name}=`}${String(item)}`) : [`${name}=${String(value)}`]))
  return parts.length === 0 ? 'every trace' : parts.join(', ')
}

function PromptOf({ projectId, evaluator }: { projectId: string; evaluator: Evaluator }) {
  const promptsets = usePromptsets(projectId)
  if (evaluator.promptRef !== null) {
    const promptset = promptsets.data?.find((promptset) => promptset.name === evaluator.promptRef?.name)
    return (
      <p>
        Asks the version of the prompt registry{' '}
        {promptset ? <Link to={projectPath(`/prompts/${promptset.id}`, projectId)}>{evaluator.promptRef.name}</Link> : <strong>{evaluator.promptRef.name}</strong>} labelled <code>{evaluator.promptRef.label}</code>, read at each judgment.
      </p>
    )
  }
  return (
    <details className="card prompt-of">
      <summary>The template</summary>
      <pre className="preview-text">{evaluator.prompt}</pre>
    </details>
  )
}

function Runs({ projectId, evaluatorId, chosen, onChoose }: { projectId: string; evaluatorId: string; chosen: string | undefined; onChoose: (runId: string | undefined) => void }) {
  const runs = useEvaluatorRuns(projectId, evaluatorId)
  const start = useCreateEvaluatorRun(projectId, evaluatorId)
  const [range, setRange] = useState<TimeRange>('24h')
  return (
    <section aria-labelledby="runs-title">
      <h2 id="runs-title">Runs over past traces</h2>
      <form
        className="inline-form runs-form"
        aria-label="Judge past traces"
        onSubmit={(event) => {
          event.preventDefault()
          const to = new Date()
          start.mutate({ from: new Date(to.getTime() - timeRanges[range]).toISOString(), to: to.toISOString() })
        }}
      >
        <label>
          <span>Judge every matching trace of</span>
          <select value={range} onChange={(event) => setRange(event.target.value as TimeRange)}>
            {runRanges.map((option) => (
              <option key={option.range} value={option.range}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button" disabled={start.isPending}>
          Start a run
        </button>
        <span className="muted small">No sampling; a trace judged before is judged again, its score replaced.</span>
      </form>
      {start.isError && <ErrorMessage error={start.error} what="the run" action="start" />}
      {runs.isError && <ErrorMessage error={runs.error} what="the runs" />}
      {runs.data?.length === 0 && <p className="muted">No run yet.</p>}
      {runs.data && runs.data.length > 0 && (
        <table className="list-table" aria-label="Runs">
          <thead>
            <tr>
              <th scope="col">Traces of</th>
              <th scope="col">Status</th>
              <th scope="col">Traces</th>
              <th scope="col">Judgments</th>
              <th scope="col">Started</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((run) => (
              <RunRow key={run.id} run={run} chosen={run.id === chosen} onChoose={() => onChoose(run.id === chosen ? undefined : run.id)} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

function RunRow({ run, chosen, onChoose }: { run: EvaluatorRun; chosen: boolean; onChoose: () => void }) {
  return (
    <tr className={chosen ? 'chosen' : undefined}>
      <td>
        {formatTime(run.from)} – {formatTime(run.to)}
      </td>
      <td>
        <span className={run.status === 'completed' ? 'badge ok' : 'badge neutral'}>{run.status}</span>
      </td>
      <td>{formatCount(run.traceCount)}</td>
      <td>
        <JudgmentCountsText counts={run.judgments} />
      </td>
      <td>{formatTime(run.createdAt)}</td>
      <td className="actions">
        <button type="button" className="button small" aria-pressed={chosen} onClick={onChoose}>
          {chosen ? 'Show all judgments' : 'Its judgments'}
        </button>
      </td>
    </tr>
  )
}

function Judgments({ projectId, evaluator, busy, runId, onClearRun }: { projectId: string; evaluator: Evaluator; busy: boolean; runId: string | undefined; onClearRun: () => void }) {
  const [status, setStatus] = useState<JudgmentStatus | ''>('')
  const list = useJudgments(projectId, evaluator.id, { status: status || undefined, runId }, busy)
  const judgments = list.data?.pages.flatMap((page) => page.judgments) ?? []
  const scores = useJudgmentScores(projectId, evaluator.scoreName, judgments)
  return (
    <section aria-labelledby="judgments-title">
      <div className="page-header">
        <h2 id="judgments-title">Judgments</h2>
        <label className="inline-label">
          <span>Status</span>
          <select aria-label="Judgment status" value={status} onChange={(event) => setStatus(event.target.value as JudgmentStatus | '')}>
            <option value="">All</option>
            <option value="completed">Completed</option>
            <option value="failed">Failed</option>
            <option value="pending">Pending</option>
            <option value="skipped">Skipped</option>
          </select>
        </label>
        {runId && (
          <button type="button" className="button small" onClick={onClearRun}>
            Of one run ✕
          </button>
        )}
      </div>
      {list.isPending && <Loading label="Loading the judgments" />}
      {list.isError && <ErrorMessage error={list.error} what="the judgments" />}
      {list.data && judgments.length === 0 && <Empty>No judgment {status ? `with status ${status} ` : ''}yet. New traces that match are judged once they are complete.</Empty>}
      {judgments.length > 0 && (
        <table className="list-table judgments" aria-label="Judgments">
          <thead>
            <tr>
              <th scope="col">Made</th>
              <th scope="col">Trace</th>
              <th scope="col">Status</th>
              <th scope="col">Score</th>
              <th scope="col" className="numeric">
                Tokens in / out
              </th>
              <th scope="col" className="numeric">
                Cost
              </th>
              <th scope="col" className="numeric">
                Latency
              </th>
            </tr>
          </thead>
          <tbody>
            {judgments.map((judgment) => (
              <JudgmentRow key={judgment.id} projectId={projectId} judgment={judgment} score={judgment.scoreId === null ? undefined : scores.get(judgment.scoreId)} />
            ))}
          </tbody>
        </table>
      )}
      {list.hasNextPage && (
        <button type="button" className="button" disabled={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
          Load older judgments
        </button>
      )}
    </section>
  )
}

function JudgmentRow({ projectId, judgment, score }: { projectId: string; judgment: Judgment; score: Score | undefined }) {
  return (
    <tr>
      <td>{formatTime(judgment.createdAt)}</td>
      <td>
        <Link to={projectPath(`/traces/${judgment.traceId}`, projectId)}>
          <code>{judgment.traceId.slice(0, 12)}…</code>
        </Link>
        {judgment.runId && <div className="muted small">by a run</div>}
      </td>
      <td>
        <span className={statusBadge[judgment.status]}>{judgment.status}</span>
        {judgment.attempts > 1 && <span className="muted small"> {judgment.attempts} attempts</span>}
      </td>
      <td className="judgment-score">
        {score ? (
          <>
            <strong>
              <ScoreValue score={score} />
            </strong>
            {score.comment && <div className="muted small">{score.comment}</div>}
          </>
        ) : judgment.scoreId !== null ? (
          <span className="muted">…</span>
        ) : (
          '—'
        )}
        {judgment.skipReason && <div className="muted small">{judgment.skipReason}</div>}
        {judgment.error && <div className="error-text small">{judgment.error}</div>}
      </td>
      <td className="numeric">
        {formatCount(judgment.inputTokens)} / {formatCount(judgment.outputTokens)}
      </td>
      <td className="numeric" title={formatCostExact(judgment.costUsd)}>
        {formatCost(judgment.costUsd)}
      </td>
      <td className="numeric">{formatDuration(judgment.latencyMs)}</td>
    </tr>
  )
}
