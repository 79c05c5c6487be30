import { useQuery } from '@tanstack/react-query'
import { useMemo, useState, type FormEvent } from 'react'
import { Link, useNavigate } from 'react-router'
import { apiGet, apiPath } from '../api/client.ts'
import { useCreateEvaluator, useEvaluatorPreview, type NewEvaluator, type PreviewRequest } from '../api/evaluators.api.ts'
import { useLlmConnections } from '../api/llm-connections.api.ts'
import { usePromptLabels } from '../api/prompt-labels.api.ts'
import { usePromptsets } from '../api/prompts.api.ts'
import { useScoreConfigs } from '../api/scores.api.ts'
import type { TracePage } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { useDebounced } from '../lib/debounced.ts'
import { formatTime } from '../lib/format.ts'

// A new LLM judge: who judges (connection, model), what it is asked (a template over the trace's
// {{input}} and {{output}}, or a promptset's version by label), which traces (the trace list's
// filters, a share of them) and the score it gives; beside it, the template filled from a real
// trace, exactly as the judge would be sent it, or why the judge would skip that trace.

const defaultTemplate = `Rate how well the answer responds to the question: 1 when it is correct and helpful, 0 when it is not.

Question:
{{input}}

Answer:
{{output}}`

/** The filter fields offered, as GET /api/traces names them. */
const filterFields = [
  { name: 'service', label: 'Service' },
  { name: 'model', label: 'Model' },
  { name: 'name', label: 'Root span name' },
  { name: 'q', label: 'Text' },
] as const
type FilterText = Record<(typeof filterFields)[number]['name'], string>

export default function EvaluatorNewPage() {
  const { projectId } = useProject()
  const navigate = useNavigate()
  const connections = useLlmConnections(projectId)
  const scoreConfigs = useScoreConfigs(projectId)
  const promptsets = usePromptsets(projectId)
  const create = useCreateEvaluator(projectId)

  const [name, setName] = useState('')
  const [connectionId, setConnectionId] = useState('')
  const [model, setModel] = useState('gpt-4o-mini')
  const [scoreName, setScoreName] = useState('')
  const [source, setSource] = useState<'template' | 'promptset'>('template')
  const [template, setTemplate] = useState(defaultTemplate)
  const [promptsetName, setPromptsetName] = useState('')
  const [label, setLabel] = useState('production')
  const [filterText, setFilterText] = useState<FilterText>({ service: '', model: '', name: '', q: '' })
  const [status, setStatus] = useState('')
  const [attributes, setAttributes] = useState('')
  const [samplingPercent, setSamplingPercent] = useState('100')
  const [enabled, setEnabled] = useState(true)

  const chosenConnection = connectionId || connections.data?.[0]?.id || ''
  const chosenPromptset = promptsetName || promptsets.data?.[0]?.name || ''
  const promptsetId = promptsets.data?.find((promptset) => promptset.name === chosenPromptset)?.id ?? ''

  const filter = useMemo(() => {
    const result: Record<string, string | string[]> = {}
    for (const field of filterFields) if (filterText[field.name].trim() !== '') result[field.name] = filterText[field.name].trim()
    if (status !== '') result.status = status
    const pairs = attributes
      .split(/[\n,]/)
      .map((pair) => pair.trim())
      .filter(Boolean)
    if (pairs.length > 0) result.attr = pairs
    return result
  }, [filterText, status, attributes])

  const prompt: NewEvaluator['prompt'] = source === 'template' ? template : { name: chosenPromptset, label: label.trim() || 'production' }

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate(
      { name: name.trim(), connectionId: chosenConnection, model: model.trim(), prompt, scoreName: scoreName.trim(), filter, samplingRate: Number(samplingPercent) / 100, enabled },
      { onSuccess: (evaluator) => navigate(projectPath(`/evaluators/${evaluator.id}`, projectId)) },
    )
  }

  const noConnection = connections.data?.length === 0
  return (
    <section className="page" aria-labelledby="new-evaluator-title">
      <div className="page-header">
        <Link to={projectPath('/evaluators', projectId)} className="back">
          ← Evaluators
        </Link>
        <h1 id="new-evaluator-title">New evaluator</h1>
      </div>
      <div className="evaluator-grid">
        <form className="card form" onSubmit={submit} aria-label="New evaluator">
          <label>
            <span>Name</span>
            <input required value={name} onChange={(event) => setName(event.target.value)} placeholder="helpfulness" />
          </label>
          <div className="two-columns">
            <label>
              <span>LLM connection</span>
              <select aria-label="LLM connection" value={chosenConnection} onChange={(event) => setConnectionId(event.target.value)} required>
                {(connections.data ?? []).map((connection) => (
                  <option key={connection.id} value={connection.id}>
                    {connection.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              <span>Judge model</span>
              <input required value={model} onChange={(event) => setModel(event.target.value)} />
            </label>
          </div>
          {noConnection && (
            <p className="muted small">
              The project has no LLM connection yet: <Link to={projectPath('/llm-connections', projectId)}>add one</Link>.
            </p>
          )}
          <label>
            <span>Score name</span>
            <input required list="score-names" aria-describedby="score-name-hint" value={scoreName} onChange={(event) => setScoreName(event.target.value)} placeholder="helpful" />
            <datalist id="score-names">
              {(scoreConfigs.data ?? []).map((config) => (
                <option key={config.id} value={config.name} />
              ))}
            </datalist>
          </label>
          <p id="score-name-hint" className="muted small hint">
            A configured score’s range is checked: a judge’s score outside it fails the attempt.
          </p>

          <fieldset className="choices">
            <legend>What the judge is asked</legend>
            <label className="checkbox">
              <input type="radio" name="prompt-source" checked={source === 'template'} onChange={() => setSource('template')} /> A template
            </label>
            <label className="checkbox">
              <input type="radio" name="prompt-source" checked={source === 'promptset'} onChange={() => setSource('promptset')} disabled={(promptsets.data ?? []).length === 0} /> A prompt registry’s version, by label
            </label>
          </fieldset>
          {source === 'template' ? (
            <>
              <label>
                <span>Template</span>
                <textarea rows={9} value={template} onChange={(event) => setTemplate(event.target.value)} spellCheck={false} aria-describedby="template-hint" />
              </label>
              <p id="template-hint" className="muted small hint">
                <code>{'{{input}}'}</code> and <code>{'{{output}}'}</code> are the trace’s; the judge answers a score and its reasoning.
              </p>
            </>
          ) : (
            <PromptsetChoice projectId={projectId} promptsetId={promptsetId} names={(promptsets.data ?? []).map((promptset) => promptset.name)} promptsetName={chosenPromptset} onPromptset={setPromptsetName} label={label} onLabel={setLabel} />
          )}

          <fieldset className="filter-fields">
            <legend>Which traces</legend>
            <div className="inline-fields">
              {filterFields.map((field) => (
                <label key={field.name}>
                  <span>{field.label}</span>
                  <input value={filterText[field.name]} onChange={(event) => setFilterText((current) => ({ ...current, [field.name]: event.target.value }))} />
                </label>
              ))}
              <label>
                <span>Status</span>
                <select value={status} onChange={(event) => setStatus(event.target.value)}>
                  <option value="">Any</option>
                  <option value="ok">Without errors</option>
                  <option value="error">With an error</option>
                </select>
              </label>
              <label className="grow">
                <span>Attributes (key=value, comma separated)</span>
                <input value={attributes} onChange={(event) => setAttributes(event.target.value)} placeholder="env=prod" />
              </label>
            </div>
            <div className="inline-fields">
              <label>
                <span>Share of new traces judged (%)</span>
                <input type="number" min={0} max={100} step={1} required value={samplingPercent} onChange={(event) => setSamplingPercent(event.target.value)} />
              </label>
              <label className="checkbox">
                <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Judge new traces from now on
              </label>
            </div>
          </fieldset>
          {create.isError && <ErrorMessage error={create.error} what="the evaluator" action="create" />}
          <button type="submit" className="button primary" disabled={create.isPending || chosenConnection === '' || (source === 'promptset' && chosenPromptset === '')}>
            Create evaluator
          </button>
        </form>
        <Preview projectId={projectId} filter={filter} request={source === 'template' ? { prompt: template } : { promptRef: { name: chosenPromptset, label: label.trim() || 'production' } }} />
      </div>
    </section>
  )
}

function PromptsetChoice({ projectId, promptsetId, names, promptsetName, onPromptset, label, onLabel }: { projectId: string; promptsetId: string; names: string[]; promptsetName: string; onPromptset: (name: string) => void; label: string; onLabel: (label: string) => void }) {
  const labels = usePromptLabels(projectId, promptsetId)
  return (
    <div className="two-columns">
      <label>
        <span>Prompt registry</span>
        <select aria-label="Prompt registry" value={promptsetName} onChange={(event) => onPromptset(event.target.value)}>
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Label</span>
        <input list="promptset-labels" value={label} onChange={(event) => onLabel(event.target.value)} title="Read at each judgment: moving the label changes the judge’s prompt." />
        <datalist id="promptset-labels">
          {(labels.data ?? []).map((candidate) => (
            <option key={candidate.name} value={candidate.name}>
              v{candidate.version}
            </option>
          ))}
        </datalist>
      </label>
    </div>
  )
}

/** The template filled from one of the newest traces the filter matches. */
function Preview({ projectId, filter, request }: { projectId: string; filter: Record<string, string | string[]>; request: Omit<PreviewRequest, 'traceId'> }) {
  const settledFilter = useDebounced(filter, 400)
  const traces = useQuery({
    queryKey: ['traces', projectId, 'evaluator-preview', settledFilter],
    queryFn: () => apiGet<TracePage>(apiPath('/api/traces', { project_id: projectId, ...settledFilter, limit: 20 })),
  })
  const [traceId, setTraceId] = useState('')
  const found = traces.data?.traces ?? []
  const chosen = found.some((trace) => trace.traceId === traceId) ? traceId : (found[0]?.traceId ?? '')
  const settledRequest = useDebounced(request, 400)
  const preview = useEvaluatorPreview(projectId, chosen === '' ? null : { ...settledRequest, traceId: chosen })

  return (
    <section className="card preview-panel" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview on a trace</h2>
      {traces.isError && <ErrorMessage error={traces.error} what="the traces" />}
      {traces.data && found.length === 0 && <p className="muted">No trace matches the filter yet: the preview needs one.</p>}
      {found.length > 0 && (
        <label className="stacked">
          <span>Trace (the newest that match)</span>
          <select aria-label="Trace to preview" value={chosen} onChange={(event) => setTraceId(event.target.value)}>
            {found.map((trace) => (
              <option key={trace.traceId} value={trace.traceId}>
                {trace.name || '(no root)'} · {trace.serviceName ?? '—'} · {formatTime(trace.startTime)}
              </option>
            ))}
          </select>
        </label>
      )}
      {chosen !== '' && (
        <p className="small">
          <Link to={projectPath(`/traces/${chosen}`, projectId)}>Open the trace</Link>
        </p>
      )}
      {preview.isFetching && !preview.data && <Loading label="Filling the template" />}
      {preview.isError && <ErrorMessage error={preview.error} what="the preview" />}
      {preview.data && !preview.isError && (
        <div aria-label="Preview" aria-busy={preview.isFetching} className="preview-body">
          {preview.data.skipped !== null ? (
            <p className="skipped" role="status">
              <span className="badge muted">skipped</span> A judge would not be sent this trace: {preview.data.skipped}
            </p>
          ) : (
            <>
              <h3>What the judge is sent</h3>
              <pre className="preview-text" aria-label="Filled template">
                {preview.data.prompt}
              </pre>
            </>
          )}
          <details>
            <summary>The trace’s input and output</summary>
            <h3>Input</h3>
            <pre className="preview-text" aria-label="Input">
              {preview.data.input ?? '(none)'}
            </pre>
            <h3>Output</h3>
            <pre className="preview-text" aria-label="Output">
              {preview.data.output ?? '(none)'}
            </pre>
          </details>
        </div>
      )}
    </section>
  )
}
