import { useState, type FormEvent } from 'react'
import { useCreateLlmConnection, useDeleteLlmConnection, useLlmConnections, useTestLlmConnection } from '../api/llm-connections.api.ts'
import type { ConnectionTest, LlmConnection } from '../api/types.ts'
import { useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatDuration, formatTime } from '../lib/format.ts'
import { Can } from '../components/can.tsx'

/** The project's LLM connections: made, tested and deleted here; their keys are never shown again. */
export default function LlmConnectionsPage() {
  const { projectId } = useProject()
  const connections = useLlmConnections(projectId)
  const remove = useDeleteLlmConnection(projectId)
  return (
    <section className="page" aria-labelledby="connections-title">
      <div className="page-header">
        <h1 id="connections-title">LLM connections</h1>
        <span className="muted">OpenAI-compatible endpoints that judges, experiments and the playground call, with this project’s key</span>
      </div>
      {connections.isPending && <Loading label="Loading the connections" />}
      {connections.isError && <ErrorMessage error={connections.error} what="the connections" />}
      {connections.data?.length === 0 && <Empty>No connection yet: add one below to run judges, experiments and the playground.</Empty>}
      {connections.data && connections.data.length > 0 && (
        <table className="list-table connections" aria-label="LLM connections">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Base URL</th>
              <th scope="col">Key</th>
              <th scope="col">Added</th>
              <th scope="col">Test</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {connections.data.map((connection) => (
              <ConnectionRow key={connection.id} projectId={projectId} connection={connection} deleting={remove.isPending} onDelete={() => remove.mutate(connection.id)} />
            ))}
          </tbody>
        </table>
      )}
      {remove.isError && <ErrorMessage error={remove.error} what="the connection" action="delete" />}
      <NewConnection projectId={projectId} />
    </section>
  )
}

function ConnectionRow({ projectId, connection, deleting, onDelete }: { projectId: string; connection: LlmConnection; deleting: boolean; onDelete: () => void }) {
  const test = useTestLlmConnection(projectId)
  return (
    <tr>
      <td>{connection.name}</td>
      <td>
        <code>{connection.baseUrl}</code>
      </td>
      <td>
        <code>{connection.apiKeyHint}</code>
      </td>
      <td>{formatTime(connection.createdAt)}</td>
      <td className="test-cell" aria-live="polite">
        {test.isPending && <span className="muted">testing…</span>}
        {test.isSuccess && <TestOutcome outcome={test.data} />}
        {test.isError && <ErrorMessage error={test.error} what="the connection" action="test" />}
      </td>
      <td className="actions">
        <Can permission="llm-connections:write">
          <button type="button" className="button small" aria-label={`Test ${connection.name}`} disabled={test.isPending} onClick={() => test.mutate(connection.id)}>
            Test
          </button>
          <button
            type="button"
            className="button small danger"
            aria-label={`Delete ${connection.name}`}
            disabled={deleting}
            onClick={() => {
              if (window.confirm(`Delete the connection ${connection.name}? Its key is forgotten; an evaluator that uses it must be deleted first.`)) onDelete()
            }}
          >
            Delete
          </button>
        </Can>
      </td>
    </tr>
  )
}

/** The endpoint's answer in the API's words (which name the status), with how long it took. */
function TestOutcome({ outcome }: { outcome: ConnectionTest }) {
  return (
    <span className="test-outcome" role="status" title={outcome.status === null ? 'not reached' : `HTTP ${outcome.status}`}>
      <span className={outcome.ok ? 'badge ok' : 'badge error'}>{outcome.ok ? 'works' : 'failed'}</span>{' '}
      <span className="small">
        {outcome.message} ({formatDuration(outcome.latencyMs)})
      </span>
    </span>
  )
}

function NewConnection({ projectId }: { projectId: string }) {
  const create = useCreateLlmConnection(projectId)
  const [name, setName] = useState('')
  const [baseUrl, setBaseUrl] = useState('https://api.openai.com/v1')
  const [apiKey, setApiKey] = useState('')

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ name: name.trim(), baseUrl: baseUrl.trim(), apiKey }, { onSuccess: () => (setName(''), setApiKey('')) })
  }

  return (
    <Can permission="llm-connections:write">
      <form className="card form narrow" onSubmit={submit} aria-labelledby="new-connection-title">
        <h2 id="new-connection-title">New connection</h2>
        <label>
          <span>Name</span>
          <input required value={name} onChange={(event) => setName(event.target.value)} placeholder="openai" />
        </label>
        <label>
          <span>Base URL</span>
          <input required value={baseUrl} onChange={(event) => setBaseUrl(event.target.value)} spellCheck={false} aria-describedby="base-url-hint" />
        </label>
        <p id="base-url-hint" className="muted small hint">
          Calls go to <code>{'<base URL>/chat/completions'}</code>: OpenAI, or any endpoint that speaks its API (vLLM, Ollama, LiteLLM, Azure’s <code>/openai/v1</code>).
        </p>
        <label>
          <span>API key</span>
          <input required type="password" autoComplete="off" value={apiKey} onChange={(event) => setApiKey(event.target.value)} aria-describedby="api-key-hint" />
        </label>
        <p id="api-key-hint" className="muted small hint">
          Stored sealed; only its last four characters are shown again.
        </p>
        {create.isError && <ErrorMessage error={create.error} what="the connection" action="add" />}
        {create.isSuccess && (
          <p role="status" className="success">
            Added {create.data.name}.
          </p>
        )}
        <button type="submit" className="button primary" disabled={create.isPending || name.trim() === '' || baseUrl.trim() === '' || apiKey === ''}>
          Add connection
        </button>
      </form>
    </Can>
  )
}
