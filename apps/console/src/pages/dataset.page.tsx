import { useState, type ChangeEvent, type FormEvent } from 'react'
import { Link, useNavigate, useParams, useSearchParams } from 'react-router'
import { itemsDownloadPath, useAddItems, useDataset, useDeleteItem } from '../api/datasets.api.ts'
import { useEvaluators } from '../api/evaluators.api.ts'
import { useCreateExperiment, useExperiments } from '../api/experiments.api.ts'
import { useLlmConnections } from '../api/llm-connections.api.ts'
import { usePromptsets, usePromptset } from '../api/prompts.api.ts'
import type { DatasetWithItems, Experiment } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatCost, formatDuration, formatTime } from '../lib/format.ts'
import { jsonOrText, jsonPreview } from '../lib/json-preview.ts'
import { Can } from '../components/can.tsx'

/** One dataset: its items in any version, JSONL in and out, and the experiments run over it. */
export default function DatasetPage() {
  const { datasetId = '' } = useParams()
  const { projectId } = useProject()
  const [params, setParams] = useSearchParams()
  const asked = params.get('version')
  const dataset = useDataset(projectId, datasetId, asked === null ? undefined : Number(asked))

  if (dataset.isPending) return <Loading label="Loading the dataset" />
  if (dataset.isError) return <ErrorMessage error={dataset.error} what={`dataset ${datasetId}`} />
  const data = dataset.data
  const chooseVersion = (version: string) => {
    const next = new URLSearchParams(params)
    if (version === String(data.version)) next.delete('version')
    else next.set('version', version)
    setParams(next, { replace: true })
  }

  return (
    <section className="page" aria-labelledby="dataset-title">
      <div className="page-header">
        <Link to={projectPath('/datasets', projectId)} className="back">
          ← Datasets
        </Link>
        <h1 id="dataset-title">{data.name}</h1>
        <span className="muted">
          id <code>{data.id}</code>
        </span>
      </div>
      {data.description && <p>{data.description}</p>}
      <div className="toolbar">
        <label>
          <span>Version</span>
          <select value={data.itemsVersion} onChange={(event) => chooseVersion(event.target.value)} aria-label="Dataset version">
            {Array.from({ length: data.version + 1 }, (_, index) => data.version - index).map((version) => (
              <option key={version} value={version}>
                v{version}
                {version === data.version ? ' (current)' : ''}
              </option>
            ))}
          </select>
        </label>
        <a className="button" href={itemsDownloadPath(projectId, data.id, data.itemsVersion)} download>
          Download JSONL
        </a>
        <UploadJsonl projectId={projectId} datasetId={data.id} />
      </div>
      <ItemsTable projectId={projectId} dataset={data} />
      <Can permission="datasets:write">
      <AddItemForm projectId={projectId} datasetId={data.id} />
      </Can>
      <ExperimentsSection projectId={projectId} dataset={data} />
    </section>
  )
}

function UploadJsonl({ projectId, datasetId }: { projectId: string; datasetId: string }) {
  const add = useAddItems(projectId)
  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0]
    if (file === undefined) return
    add.mutate({ datasetId, jsonl: await file.text() })
    event.target.value = ''
  }
  return (
    <>
      <label className="button file-button">
        Upload JSONL
        <input type="file" accept=".jsonl,.ndjson,application/x-ndjson,application/jsonl" className="visually-hidden" onChange={(event) => void upload(event)} aria-label="Upload a JSONL file of items" />
      </label>
      {add.isSuccess && (
        <span role="status" className="success">
          Added {add.data.items.length} items: version {add.data.version}.
        </span>
      )}
      {add.isError && (
        <span role="alert" className="error-message">
          {add.error.message}
        </span>
      )}
    </>
  )
}

function ItemsTable({ projectId, dataset }: { projectId: string; dataset: DatasetWithItems }) {
  const remove = useDeleteItem(projectId, dataset.id)
  const current = dataset.itemsVersion === dataset.version
  if (dataset.items.length === 0) return <Empty>No items in version {dataset.itemsVersion}: add some below, upload a JSONL file, or add a trace from its page.</Empty>
  return (
    <>
      <table className="list-table items-table" aria-label={`Items of version ${dataset.itemsVersion}`}>
        <thead>
          <tr>
            <th scope="col">Input</th>
            <th scope="col">Expected output</th>
            <th scope="col">Source</th>
            <th scope="col">Since</th>
            {current && <th scope="col"><span className="visually-hidden">Actions</span></th>}
          </tr>
        </thead>
        <tbody>
          {dataset.items.map((item) => (
            <tr key={item.id}>
              <td>
                <pre className="cell-json">{jsonPreview(item.input)}</pre>
              </td>
              <td>{item.expectedOutput === null ? <span className="muted">—</span> : <pre className="cell-json">{jsonPreview(item.expectedOutput)}</pre>}</td>
              <td>
                {item.sourceTraceId ? (
                  <Link to={projectPath(`/traces/${item.sourceTraceId}`, projectId, item.sourceSpanId ? { span: item.sourceSpanId } : {})}>{item.sourceSpanId ? 'span' : 'trace'}</Link>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td>v{item.validFrom}</td>
              {current && (
                <td className="actions">
                  <Can permission="datasets:write">
                  <button type="button" className="button small danger" aria-label={`Delete item ${item.id}`} disabled={remove.isPending} onClick={() => remove.mutate(item.id)}>
                    Delete
                  </button>
                  </Can>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {dataset.itemsTotal > dataset.items.length && (
        <p className="muted small">
          The first {dataset.items.length} of {dataset.itemsTotal} items; Download JSONL has them all.
        </p>
      )}
      {remove.isError && <ErrorMessage error={remove.error} what="the deletion" />}
    </>
  )
}

function AddItemForm({ projectId, datasetId }: { projectId: string; datasetId: string }) {
  const add = useAddItems(projectId)
  const [input, setInput] = useState('')
  const [expected, setExpected] = useState('')
  function submit(event: FormEvent) {
    event.preventDefault()
    const expectedOutput = jsonOrText(expected)
    add.mutate({ datasetId, items: [{ input: jsonOrText(input), ...(expectedOutput === undefined ? {} : { expectedOutput }) }] }, { onSuccess: () => (setInput(''), setExpected('')) })
  }
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="new-item-title">
      <h2 id="new-item-title">New item</h2>
      <div className="two-columns">
        <label>
          <span>Input (JSON, or text)</span>
          <textarea required rows={3} value={input} onChange={(event) => setInput(event.target.value)} placeholder='{"question": "What is the capital of France?"}' />
        </label>
        <label>
          <span>Expected output</span>
          <textarea rows={3} value={expected} onChange={(event) => setExpected(event.target.value)} placeholder="Paris" />
        </label>
      </div>
      {add.isError && <ErrorMessage error={add.error} what="the item" />}
      <button type="submit" className="button primary" disabled={add.isPending || input.trim() === ''}>
        Add item
      </button>
    </form>
  )
}

const scoreText = (experiment: Experiment) =>
  experiment.aggregates.scores.length === 0 ? '—' : experiment.aggregates.scores.map((score) => `${score.name} ${score.avg === null ? '—' : score.avg.toFixed(2)}`).join(' · ')

function ExperimentsSection({ projectId, dataset }: { projectId: string; dataset: DatasetWithItems }) {
  const experiments = useExperiments(projectId, dataset.id)
  const [chosen, setChosen] = useState<string[]>([])
  const navigate = useNavigate()
  const toggle = (id: string) => setChosen((current) => (current.includes(id) ? current.filter((other) => other !== id) : [...current, id]))
  return (
    <section aria-labelledby="experiments-title">
      <h2 id="experiments-title">Experiments</h2>
      {experiments.isError && <ErrorMessage error={experiments.error} what="the experiments" />}
      {experiments.data?.length === 0 && <p className="muted">None yet: run a prompt version over this dataset below.</p>}
      {experiments.data && experiments.data.length > 0 && (
        <>
          <table className="list-table" aria-label="Experiments">
            <thead>
              <tr>
                <th scope="col">
                  <span className="visually-hidden">Compare</span>
                </th>
                <th scope="col">Experiment</th>
                <th scope="col">Status</th>
                <th scope="col">Scores</th>
                <th scope="col">Latency (avg)</th>
                <th scope="col">Cost</th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {experiments.data.map((experiment) => (
                <tr key={experiment.id}>
                  <td>
                    <input type="checkbox" checked={chosen.includes(experiment.id)} onChange={() => toggle(experiment.id)} aria-label={`Compare ${experiment.name}`} />
                  </td>
                  <td>
                    {experiment.name}
                    <div className="muted small">
                      dataset v{experiment.datasetVersion} · {experiment.itemCount} items
                    </div>
                  </td>
                  <td>
                    <span className={experiment.status === 'completed' ? 'badge ok' : 'badge neutral'}>{experiment.status}</span>
                    {experiment.aggregates.results.failed > 0 && <span className="badge error">{experiment.aggregates.results.failed} failed</span>}
                  </td>
                  <td>{scoreText(experiment)}</td>
                  <td>{formatDuration(experiment.aggregates.latencyMs.avg)}</td>
                  <td>{formatCost(experiment.aggregates.costUsd)}</td>
                  <td>{formatTime(experiment.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="table-actions">
            <button type="button" className="button primary" disabled={chosen.length < 1} onClick={() => navigate(projectPath('/experiments/compare', projectId, { ids: chosen.join(',') }))}>
              Compare {chosen.length > 0 ? chosen.length : ''} selected
            </button>
            <span className="muted small">the first you tick is the baseline the others are compared to</span>
          </div>
        </>
      )}
      <Can permission="experiments:run">
      <RunExperimentForm projectId={projectId} dataset={dataset} />
      </Can>
    </section>
  )
}

function RunExperimentForm({ projectId, dataset }: { projectId: string; dataset: DatasetWithItems }) {
  const promptsets = usePromptsets(projectId)
  const connections = useLlmConnections(projectId)
  const evaluators = useEvaluators(projectId)
  const create = useCreateExperiment(projectId)
  const [promptsetId, setPromptsetId] = useState('')
  const chosenPromptset = promptsetId || promptsets.data?.[0]?.id || ''
  const promptset = usePromptset(projectId, chosenPromptset)
  const [version, setVersion] = useState('')
  const [connectionId, setConnectionId] = useState('')
  const [model, setModel] = useState('')
  const [evaluatorIds, setEvaluatorIds] = useState<string[]>([])
  const versions = [...(promptset.data?.prompts ?? [])].sort((a, b) => b.version - a.version)
  const chosenVersion = version || String(versions[0]?.version ?? '')
  const chosenConnection = connectionId || connections.data?.[0]?.id || ''

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ datasetId: dataset.id, promptsetId: chosenPromptset, version: Number(chosenVersion), connectionId: chosenConnection, ...(model.trim() ? { model: model.trim() } : {}), evaluatorIds })
  }

  if (promptsets.data?.length === 0 || connections.data?.length === 0) {
    return (
      <p className="muted">
        To run an experiment, the project needs a <Link to={projectPath('/prompts', projectId)}>prompt registry</Link> and an <Link to={projectPath('/llm-connections', projectId)}>LLM connection</Link>.
      </p>
    )
  }
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="run-title">
      <h2 id="run-title">Run an experiment</h2>
      <p className="muted small">
        Each item’s input fills the prompt’s variables (by key; <code>{'{{input}}'}</code> is the whole input), on version {dataset.version} of the dataset.
      </p>
      <div className="two-columns">
        <label>
          <span>Prompt registry</span>
          <select aria-label="Prompt registry" value={chosenPromptset} onChange={(event) => (setPromptsetId(event.target.value), setVersion(''))}>
            {(promptsets.data ?? []).map((promptset) => (
              <option key={promptset.id} value={promptset.id}>
                {promptset.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Version</span>
          <select aria-label="Version" value={chosenVersion} onChange={(event) => setVersion(event.target.value)}>
            {versions.map((prompt) => (
              <option key={prompt.id} value={prompt.version}>
                v{prompt.version} · {prompt.model}
                {(prompt.labels ?? []).length > 0 ? ` (${(prompt.labels ?? []).join(', ')})` : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>LLM connection</span>
          <select aria-label="LLM connection" value={chosenConnection} onChange={(event) => setConnectionId(event.target.value)}>
            {(connections.data ?? []).map((connection) => (
              <option key={connection.id} value={connection.id}>
                {connection.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Model (default: the version’s)</span>
          <input value={model} onChange={(event) => setModel(event.target.value)} />
        </label>
      </div>
      {(evaluators.data ?? []).length > 0 && (
        <fieldset className="checkboxes">
          <legend>Evaluators</legend>
          {(evaluators.data ?? []).map((evaluator) => (
            <label key={evaluator.id} className="checkbox">
              <input
                type="checkbox"
                checked={evaluatorIds.includes(evaluator.id)}
                onChange={() => setEvaluatorIds((current) => (current.includes(evaluator.id) ? current.filter((id) => id !== evaluator.id) : [...current, evaluator.id]))}
              />
              <span>
                {evaluator.name} <span className="muted">→ {evaluator.scoreName}</span>
              </span>
            </label>
          ))}
        </fieldset>
      )}
      {create.isError && <ErrorMessage error={create.error} what="the experiment" />}
      {create.isSuccess && (
        <p role="status" className="success">
          Started “{create.data.name}” over {create.data.itemCount} items.
        </p>
      )}
      <button type="submit" className="button primary" disabled={create.isPending || chosenVersion === '' || chosenConnection === ''}>
        Run experiment
      </button>
    </form>
  )
}
