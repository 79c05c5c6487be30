import { Link } from 'react-router'
import { useEvaluators, useSetEvaluatorEnabled } from '../api/evaluators.api.ts'
import { useLlmConnections } from '../api/llm-connections.api.ts'
import type { Evaluator } from '../api/types.ts'
import { EvaluatorState, JudgeSpend, JudgmentCountsText } from '../components/evaluator-state.tsx'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatCost, formatCount } from '../lib/format.ts'
import { Can } from '../components/can.tsx'

/** The project's LLM judges: their state, judgments and what they spent; paused and resumed here. */
export default function EvaluatorsPage() {
  const { projectId } = useProject()
  const evaluators = useEvaluators(projectId)
  const connections = useLlmConnections(projectId)
  const setEnabled = useSetEvaluatorEnabled(projectId)
  const connectionName = (id: string) => connections.data?.find((connection) => connection.id === id)?.name ?? '—'

  return (
    <section className="page" aria-labelledby="evaluators-title">
      <div className="page-header">
        <h1 id="evaluators-title">Evaluators</h1>
        <span className="muted">LLM judges: each judges the new traces that match its filter, and gives a score</span>
        <span className="topbar-spacer" />
        <Can permission="evaluators:write">
          <Link className="button primary" to={projectPath('/evaluators/new', projectId)}>
            New evaluator
          </Link>
        </Can>
      </div>
      {evaluators.isPending && <Loading label="Loading the evaluators" />}
      {evaluators.isError && <ErrorMessage error={evaluators.error} what="the evaluators" />}
      {evaluators.data?.length === 0 && (
        <Empty>
          No evaluator yet. <Link to={projectPath('/evaluators/new', projectId)}>Make one</Link>: it needs an <Link to={projectPath('/llm-connections', projectId)}>LLM connection</Link>.
        </Empty>
      )}
      {evaluators.data && evaluators.data.length > 0 && (
        <>
          <TotalSpend evaluators={evaluators.data} />
          <table className="list-table" aria-label="Evaluators">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Score</th>
                <th scope="col">Judge</th>
                <th scope="col">Judgments</th>
                <th scope="col">Spend</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {evaluators.data.map((evaluator) => (
                <tr key={evaluator.id}>
                  <td>
                    <Link to={projectPath(`/evaluators/${evaluator.id}`, projectId)}>{evaluator.name}</Link>
                  </td>
                  <td>
                    <EvaluatorState evaluator={evaluator} />
                  </td>
                  <td>
                    <code>{evaluator.scoreName}</code>
                  </td>
                  <td>
                    {evaluator.model}
                    <div className="muted small">via {connectionName(evaluator.connectionId)}</div>
                  </td>
                  <td>
                    <JudgmentCountsText counts={evaluator.judgments} />
                  </td>
                  <td>
                    <JudgeSpend judge={evaluator.judge} />
                  </td>
                  <td className="actions">
                    <Can permission="evaluators:write">
                      <button
                        type="button"
                        className="button small"
                        aria-label={`${evaluator.enabled ? 'Pause' : 'Resume'} ${evaluator.name}`}
                        disabled={setEnabled.isPending}
                        onClick={() => setEnabled.mutate({ evaluatorId: evaluator.id, enabled: !evaluator.enabled })}
                      >
                        {evaluator.enabled ? 'Pause' : 'Resume'}
                      </button>
                    </Can>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {setEnabled.isError && <ErrorMessage error={setEnabled.error} what="the evaluator" action="change" />}
    </section>
  )
}

/** What every judge of the project spent: the sum of its evaluators' judgments. */
function TotalSpend({ evaluators }: { evaluators: Evaluator[] }) {
  const costs = evaluators.map((evaluator) => evaluator.judge.costUsd).filter((cost): cost is number => cost !== null)
  const sum = (pick: (evaluator: Evaluator) => number) => evaluators.reduce((total, evaluator) => total + pick(evaluator), 0)
  return (
    <dl className="summary-strip" aria-label="What the judges spent">
      <div>
        <dt>Judges’ cost</dt>
        <dd>{costs.length === 0 ? '—' : formatCost(costs.reduce((total, cost) => total + cost, 0))}</dd>
      </div>
      <div>
        <dt>Tokens in / out</dt>
        <dd>
          {formatCount(sum((evaluator) => evaluator.judge.inputTokens))} / {formatCount(sum((evaluator) => evaluator.judge.outputTokens))}
        </dd>
      </div>
      <div>
        <dt>Judgments completed</dt>
        <dd>{formatCount(sum((evaluator) => evaluator.judgments.completed))}</dd>
      </div>
      <div>
        <dt>Failed</dt>
        <dd className={sum((evaluator) => evaluator.judgments.failed) > 0 ? 'error-text' : undefined}>{formatCount(sum((evaluator) => evaluator.judgments.failed))}</dd>
      </div>
    </dl>
  )
}
