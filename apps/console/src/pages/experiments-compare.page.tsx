import { Link, useSearchParams } from 'react-router'
import { useExperimentsWithResults, usePromote, type Promotion } from '../api/experiments.api.ts'
import { usePromptLabels } from '../api/prompt-labels.api.ts'
import { usePromptsets } from '../api/prompts.api.ts'
import type { ExperimentResult, ExperimentWithResults, Promptset } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatCost, formatCount, formatDuration } from '../lib/format.ts'
import { jsonPreview } from '../lib/json-preview.ts'

// Two or more experiments side by side: their figures with the difference to the first (the
// baseline), then item by item the outputs, scores, cost and latency; and "promote" moves the
// production label to an experiment's prompt version.

const signed = (value: number, digits: number) => `${value > 0 ? '+' : value < 0 ? '−' : '±'}${Math.abs(value).toFixed(digits)}`

function Delta({ value, baseline, digits, lowerIsBetter = false, format }: { value: number | null; baseline: number | null; digits: number; lowerIsBetter?: boolean; format?: (value: number) => string }) {
  if (value === null || baseline === null || value === baseline) return null
  const better = lowerIsBetter ? value < baseline : value > baseline
  const difference = value - baseline
  return <span className={better ? 'delta better' : 'delta worse'}>{format ? `${difference > 0 ? '+' : '−'}${format(Math.abs(difference))}` : signed(difference, digits)}</span>
}

const scoreNames = (experiments: ExperimentWithResults[]) => [...new Set(experiments.flatMap((experiment) => experiment.aggregates.scores.map((score) => score.name)))].sort()
const averageOf = (experiment: ExperimentWithResults, name: string) => experiment.aggregates.scores.find((score) => score.name === name)?.avg ?? null

export default function ExperimentsComparePage() {
  const { projectId } = useProject()
  const [params] = useSearchParams()
  const ids = (params.get('ids') ?? '').split(',').filter((id) => id !== '')
  const queries = useExperimentsWithResults(projectId, ids)
  const promote = usePromote(projectId)
  const promptsets = usePromptsets(projectId)

  if (ids.length === 0) return <p className="page-error">Choose experiments to compare on a dataset’s page.</p>
  const failed = queries.find((query) => query.isError)
  if (failed) return <ErrorMessage error={failed.error} what="an experiment" />
  if (queries.some((query) => query.isPending)) return <Loading label="Loading the experiments" />
  const experiments = queries.map((query) => query.data as ExperimentWithResults)
  const [baseline] = experiments as [ExperimentWithResults]
  const names = scoreNames(experiments)
  const resultsOf = experiments.map((experiment) => new Map(experiment.results.map((result) => [result.datasetItemId, result])))
  const items = baseline.results

  return (
    <section className="page compare-page" aria-labelledby="compare-title">
      <div className="page-header">
        <Link to={projectPath(`/datasets/${baseline.datasetId}`, projectId)} className="back">
          ← Dataset
        </Link>
        <h1 id="compare-title">Compare experiments</h1>
        <span className="muted">differences are to the first, {baseline.name}</span>
      </div>
      <table className="list-table compare-summary" aria-label="Experiments compared">
        <thead>
          <tr>
            <th scope="col">Experiment</th>
            <th scope="col">Status</th>
            {names.map((name) => (
              <th scope="col" key={name}>
                {name} (avg)
              </th>
            ))}
            <th scope="col">Latency avg · p95</th>
            <th scope="col">Cost</th>
            <th scope="col">Tokens in · out</th>
            <th scope="col">Prompt</th>
          </tr>
        </thead>
        <tbody>
          {experiments.map((experiment) => (
            <tr key={experiment.id}>
              <td>
                {experiment.name}
                <div className="muted small">
                  {experiment.model} · dataset v{experiment.datasetVersion}
                </div>
              </td>
              <td>
                <span className={experiment.status === 'completed' ? 'badge ok' : 'badge neutral'}>{experiment.status}</span>
                {experiment.aggregates.results.failed > 0 && <span className="badge error">{experiment.aggregates.results.failed} failed</span>}
              </td>
              {names.map((name) => (
                <td key={name}>
                  {averageOf(experiment, name)?.toFixed(2) ?? '—'} {experiment !== baseline && <Delta value={averageOf(experiment, name)} baseline={averageOf(baseline, name)} digits={2} />}
                </td>
              ))}
              <td>
                {formatDuration(experiment.aggregates.latencyMs.avg)} · {formatDuration(experiment.aggregates.latencyMs.p95)}{' '}
                {experiment !== baseline && <Delta value={experiment.aggregates.latencyMs.avg} baseline={baseline.aggregates.latencyMs.avg} digits={0} lowerIsBetter format={(ms) => formatDuration(ms)} />}
              </td>
              <td>
                {formatCost(experiment.aggregates.costUsd)} {experiment !== baseline && <Delta value={experiment.aggregates.costUsd} baseline={baseline.aggregates.costUsd} digits={6} lowerIsBetter format={(usd) => formatCost(usd)} />}
              </td>
              <td>
                {formatCount(experiment.aggregates.inputTokens)} · {formatCount(experiment.aggregates.outputTokens)}
              </td>
              <td>
                {experiment.promptsetId && experiment.promptVersion !== null ? (
                  <>
                    <Link to={projectPath(`/prompts/${experiment.promptsetId}`, projectId)}>v{experiment.promptVersion}</Link>{' '}
                    <PromoteButton projectId={projectId} promptsetId={experiment.promptsetId} version={experiment.promptVersion} pending={promote.isPending} onPromote={(promotion) => promote.mutate(promotion)} />
                  </>
                ) : (
                  <span className="muted">your code</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {promote.isSuccess && (
        <p role="status" className="success">
          {promptsetName(promptsets.data, promote.variables.promptsetId)}:{' '}
          {promote.data.moved ? `production now points at v${promote.variables.version}${promote.data.previousVersion === null ? '' : ` (was v${promote.data.previousVersion})`}.` : `production already pointed at v${promote.variables.version}.`}
        </p>
      )}
      {promote.isError && <ErrorMessage error={promote.error} what="the promotion" />}

      <h2>Item by item</h2>
      <div className="compare-items" style={{ gridTemplateColumns: `minmax(12rem, 1fr) repeat(${experiments.length}, minmax(14rem, 1.2fr))` }} role="table" aria-label="Outputs item by item">
        <div role="row" className="compare-row compare-head">
          <div role="columnheader">Input · expected</div>
          {experiments.map((experiment) => (
            <div role="columnheader" key={experiment.id}>
              {experiment.name}
            </div>
          ))}
        </div>
        {items.map((item) => (
          <div role="row" className="compare-row" key={item.datasetItemId}>
            <div role="cell" className="compare-input">
              <pre className="cell-json">{jsonPreview(item.input)}</pre>
              {item.expectedOutput !== null && (
                <p className="expected">
                  <span className="muted">expected</span> {jsonPreview(item.expectedOutput)}
                </p>
              )}
            </div>
            {experiments.map((experiment, index) => (
              <ResultCell key={experiment.id} projectId={projectId} result={resultsOf[index]?.get(item.datasetItemId)} baseline={index === 0 ? undefined : resultsOf[0]?.get(item.datasetItemId)} />
            ))}
          </div>
        ))}
      </div>
    </section>
  )
}

const promptsetName = (promptsets: Promptset[] | undefined, promptsetId: string) => promptsets?.find((promptset) => promptset.id === promptsetId)?.name ?? 'the prompt'

/**
 * Moves production to an experiment's version once the person has confirmed what moves: which
 * prompt, from which version to which. The move is sent with the version the page saw, so a label
 * moved by someone else meanwhile is refused, not silently overwritten.
 */
function PromoteButton({ projectId, promptsetId, version, pending, onPromote }: { projectId: string; promptsetId: string; version: number; pending: boolean; onPromote: (promotion: Promotion) => void }) {
  const labels = usePromptLabels(projectId, promptsetId)
  const promptsets = usePromptsets(projectId)
  const current = labels.data?.find((label) => label.name === 'production')?.version ?? null
  const name = promptsetName(promptsets.data, promptsetId)
  if (labels.isSuccess && current === version) return <span className="badge ok">production</span>
  return (
    <button
      type="button"
      className="button small"
      disabled={pending || !labels.isSuccess || !promptsets.isSuccess}
      onClick={() => {
        const move = current === null ? `Put the production label of the prompt “${name}” on v${version}? No version has it yet.` : `Move the production label of the prompt “${name}” from v${current} to v${version}?`
        if (window.confirm(`${move} Applications that read production get v${version} from then on.`)) onPromote({ promptsetId, version, expectedVersion: current })
      }}
    >
      Promote v{version} to production
    </button>
  )
}

function ResultCell({ projectId, result, baseline }: { projectId: string; result: ExperimentResult | undefined; baseline: ExperimentResult | undefined }) {
  if (result === undefined) return <div role="cell" className="muted">no result</div>
  return (
    <div role="cell" className={`compare-result ${result.status}`}>
      {result.status === 'failed' ? <p className="error-message">{result.error}</p> : result.status === 'pending' ? <p className="muted">running…</p> : <pre className="cell-json">{jsonPreview(result.output)}</pre>}
      <div className="result-facts">
        {result.scores.map((score) => {
          const before = baseline?.scores.find((other) => other.name === score.name)?.value ?? null
          return (
            <span key={score.name} className="score-chip" title={score.comment ?? undefined}>
              {score.name} {score.value ?? score.stringValue} {baseline && <Delta value={score.value} baseline={before} digits={2} />}
            </span>
          )
        })}
        <span className="muted">{formatDuration(result.latencyMs)}</span>
        <span className="muted">{formatCost(result.costUsd)}</span>
        {result.traceId && (
          <Link to={projectPath(`/traces/${result.traceId}`, projectId)} className="small">
            trace
          </Link>
        )}
      </div>
    </div>
  )
}
