import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { apiPath, apiRequest } from '../api/client.ts'
import { useLlmConnections } from '../api/llm-connections.api.ts'
import { runPlayground } from '../api/playground.api.ts'
import { usePromptsets, usePromptset } from '../api/prompts.api.ts'
import type { PlaygroundMessage, PlaygroundRun, Prompt } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ErrorMessage } from '../components/status.tsx'
import { formatCost, formatCount, formatDuration } from '../lib/format.ts'

// The playground: messages (written, or loaded from a prompt version), variables, a connection,
// model and settings; run, streamed as the model answers; every run is a trace. What works can be
// saved as the next version of a promptset (a chat prompt: the messages as JSON).

const roles: Array<PlaygroundMessage['role']> = ['system', 'developer', 'user', 'assistant']
const placeholder = /\$\{([A-Za-z_][\w.-]*)\}|\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g

/** The variables the messages use, in order of first use. */
function variablesOf(messages: PlaygroundMessage[]): string[] {
  const names = new Set<string>()
  for (const message of messages) for (const match of message.content.matchAll(placeholder)) names.add((match[1] ?? match[2]) as string)
  return [...names]
}

/** A version's value as messages: a chat prompt's own, else one user message. */
function messagesOf(prompt: Prompt): PlaygroundMessage[] {
  try {
    const parsed: unknown = JSON.parse(prompt.value)
    if (Array.isArray(parsed) && parsed.every((message) => typeof message?.role === 'string' && typeof message?.content === 'string')) return parsed as PlaygroundMessage[]
  } catch {
    // Not JSON: a text prompt.
  }
  return [{ role: 'user', content: prompt.value }]
}

export default function PlaygroundPage() {
  const { projectId } = useProject()
  const connections = useLlmConnections(projectId)
  const promptsets = usePromptsets(projectId)
  const [promptsetId, setPromptsetId] = useState('')
  const promptset = usePromptset(projectId, promptsetId)
  const [messages, setMessages] = useState<PlaygroundMessage[]>([{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: '{{question}}' }])
  const [loaded, setLoaded] = useState<{ promptsetId: string; version: number } | null>(null)
  const [values, setValues] = useState<Record<string, string>>({})
  const [connectionId, setConnectionId] = useState('')
  const [model, setModel] = useState('gpt-4o-mini')
  const [temperature, setTemperature] = useState('')
  const [maxTokens, setMaxTokens] = useState('')
  const [streamed, setStreamed] = useState('')
  const chosenConnection = connectionId || connections.data?.[0]?.id || ''
  const variables = variablesOf(messages)
  const settings = { ...(temperature === '' ? {} : { temperature: Number(temperature) }), ...(maxTokens === '' ? {} : { max_tokens: Number(maxTokens) }) }

  const run = useMutation({
    mutationFn: () => {
      setStreamed('')
      const variableValues = Object.fromEntries(variables.map((name) => [name, values[name] ?? '']))
      // An unchanged version runs as itself, so its trace names the version.
      const source = loaded ? { promptsetId: loaded.promptsetId, version: loaded.version } : { messages }
      return runPlayground(projectId, { connectionId: chosenConnection, model, ...source, variables: variableValues, modelSettings: settings }, (text) => setStreamed((current) => current + text))
    },
  })

  const edit = (index: number, change: Partial<PlaygroundMessage>) => {
    setLoaded(null)
    setMessages((current) => current.map((message, at) => (at === index ? { ...message, ...change } : message)))
  }
  const load = (prompt: Prompt) => {
    setMessages(messagesOf(prompt))
    setModel(prompt.model)
    setLoaded({ promptsetId: prompt.promptsetId, version: prompt.version })
    const loadedSettings = prompt.modelSettings as { temperature?: unknown; max_tokens?: unknown }
    setTemperature(typeof loadedSettings.temperature === 'number' ? String(loadedSettings.temperature) : '')
    setMaxTokens(typeof loadedSettings.max_tokens === 'number' ? String(loadedSettings.max_tokens) : '')
  }

  function submit(event: FormEvent) {
    event.preventDefault()
    run.mutate()
  }

  const versions = [...(promptset.data?.prompts ?? [])].sort((a, b) => b.version - a.version)
  return (
    <section className="page playground" aria-labelledby="playground-title">
      <div className="page-header">
        <h1 id="playground-title">Playground</h1>
        <span className="muted">every run is a trace of this project</span>
      </div>
      <div className="toolbar" aria-label="Load a prompt version">
        <label>
          <span>Prompt registry</span>
          <select aria-label="Prompt registry" value={promptsetId} onChange={(event) => setPromptsetId(event.target.value)}>
            <option value="">—</option>
            {(promptsets.data ?? []).map((promptset) => (
              <option key={promptset.id} value={promptset.id}>
                {promptset.name}
              </option>
            ))}
          </select>
        </label>
        {promptsetId && (
          <label>
            <span>Version</span>
            <select
              aria-label="Version"
              value={loaded?.promptsetId === promptsetId ? loaded.version : ''}
              onChange={(event) => {
                const prompt = versions.find((candidate) => String(candidate.version) === event.target.value)
                if (prompt) load(prompt)
              }}
            >
              <option value="">Load a version…</option>
              {versions.map((prompt) => (
                <option key={prompt.id} value={prompt.version}>
                  v{prompt.version}
                  {(prompt.labels ?? []).length > 0 ? ` (${(prompt.labels ?? []).join(', ')})` : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        {loaded && <span className="tag">running v{loaded.version} as it is</span>}
      </div>
      <form className="playground-grid" onSubmit={submit}>
        <fieldset className="card form messages-editor">
          <legend>Messages</legend>
          {messages.map((message, index) => (
            <div className="message-editor" key={index}>
              <select value={message.role} onChange={(event) => edit(index, { role: event.target.value as PlaygroundMessage['role'] })} aria-label={`Role of message ${index + 1}`}>
                {roles.map((role) => (
                  <option key={role} value={role}>
                    {role}
                  </option>
                ))}
              </select>
              <textarea rows={message.role === 'system' ? 2 : 3} value={message.content} onChange={(event) => edit(index, { content: event.target.value })} aria-label={`Message ${index + 1}`} />
              <button type="button" className="button small ghost" aria-label={`Remove message ${index + 1}`} onClick={() => (setLoaded(null), setMessages((current) => current.filter((_, at) => at !== index)))}>
                ✕
              </button>
            </div>
          ))}
          <button type="button" className="button small" onClick={() => (setLoaded(null), setMessages((current) => [...current, { role: 'user', content: '' }]))}>
            Add message
          </button>
          <p className="muted small">
            Variables are written <code>{'{{name}}'}</code>.
          </p>
        </fieldset>
        <fieldset className="card form">
          <legend>Run</legend>
          {variables.map((name) => (
            <label key={name}>
              <span>
                <code>{name}</code>
              </span>
              <textarea rows={2} value={values[name] ?? ''} onChange={(event) => setValues((current) => ({ ...current, [name]: event.target.value }))} />
            </label>
          ))}
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
          {connections.data?.length === 0 && (
            <p className="muted">
              The project has no LLM connection yet: <Link to={projectPath('/llm-connections', projectId)}>add one</Link>.
            </p>
          )}
          <label>
            <span>Model</span>
            <input required value={model} onChange={(event) => (setLoaded(null), setModel(event.target.value))} />
          </label>
          <div className="two-columns">
            <label>
              <span>Temperature</span>
              <input type="number" min={0} max={2} step={0.1} value={temperature} onChange={(event) => (setLoaded(null), setTemperature(event.target.value))} />
            </label>
            <label>
              <span>Max tokens</span>
              <input type="number" min={1} step={1} value={maxTokens} onChange={(event) => (setLoaded(null), setMaxTokens(event.target.value))} />
            </label>
          </div>
          <button type="submit" className="button primary" disabled={run.isPending || chosenConnection === '' || messages.length === 0}>
            {run.isPending ? 'Running…' : 'Run'}
          </button>
        </fieldset>
      </form>
      <Output projectId={projectId} pending={run.isPending} streamed={streamed} run={run.data} error={run.error} />
      <SaveAsVersion projectId={projectId} messages={messages} model={model} settings={settings} />
    </section>
  )
}

function Output({ projectId, pending, streamed, run, error }: { projectId: string; pending: boolean; streamed: string; run: PlaygroundRun | undefined; error: Error | null }) {
  if (error) return <ErrorMessage error={error} what="the run" />
  if (!pending && run === undefined) return null
  return (
    <section className="card output" aria-labelledby="output-title" aria-busy={pending}>
      <h2 id="output-title">Output</h2>
      {run?.error ? (
        <p className="error-message" role="alert">
          {run.error}
        </p>
      ) : (
        <pre className="output-text" aria-live="polite">
          {pending ? streamed : (run?.output ?? '')}
        </pre>
      )}
      {run && !pending && (
        <dl className="summary-strip">
          <div>
            <dt>Model</dt>
            <dd>{run.model}</dd>
          </div>
          <div>
            <dt>Tokens</dt>
            <dd>
              {formatCount(run.inputTokens)} in · {formatCount(run.outputTokens)} out
            </dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd>{formatCost(run.costUsd)}</dd>
          </div>
          <div>
            <dt>Latency</dt>
            <dd>
              {formatDuration(run.latencyMs)}
              {run.firstTokenMs !== null ? ` (first text ${formatDuration(run.firstTokenMs)})` : ''}
            </dd>
          </div>
          <div className="strip-actions">
            <Link className="button" to={projectPath(`/traces/${run.traceId}`, projectId)}>
              Open the trace
            </Link>
          </div>
        </dl>
      )}
    </section>
  )
}

function SaveAsVersion({ projectId, messages, model, settings }: { projectId: string; messages: PlaygroundMessage[]; model: string; settings: Record<string, unknown> }) {
  const promptsets = usePromptsets(projectId)
  const [promptsetId, setPromptsetId] = useState('')
  const chosen = promptsetId || promptsets.data?.[0]?.id || ''
  const client = useQueryClient()
  const save = useMutation({
    mutationFn: () =>
      apiRequest<Prompt>('POST', apiPath(`/api/promptsets/${encodeURIComponent(chosen)}/prompts`, { project_id: projectId }), {
        value: JSON.stringify(messages),
        model,
        modelSettings: settings,
        note: 'saved from the playground',
      }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['promptset', projectId, chosen] }),
  })
  if ((promptsets.data ?? []).length === 0) return null
  return (
    <form className="card form save-version" onSubmit={(event) => (event.preventDefault(), save.mutate())} aria-labelledby="save-title">
      <h2 id="save-title">Save as a new prompt version</h2>
      <p className="muted small">The messages as a chat prompt, with the model and its settings.</p>
      <div className="inline-form">
        <label>
          <span>Prompt registry</span>
          <select aria-label="Registry to save in" value={chosen} onChange={(event) => setPromptsetId(event.target.value)}>
            {(promptsets.data ?? []).map((promptset) => (
              <option key={promptset.id} value={promptset.id}>
                {promptset.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button primary" disabled={save.isPending || messages.length === 0 || model.trim() === ''}>
          Save version
        </button>
      </div>
      {save.isSuccess && (
        <p role="status" className="success">
          Saved as <Link to={projectPath(`/prompts/${chosen}`, projectId)}>version {save.data.version}</Link>.
        </p>
      )}
      {save.isError && <ErrorMessage error={save.error} what="the version" />}
    </form>
  )
}
