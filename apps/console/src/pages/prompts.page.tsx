import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useCreatePromptset, usePromptsets } from '../api/prompts.api.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatTime } from '../lib/format.ts'
import { useCan } from '../components/can.tsx'

export default function PromptsPage() {
  const { projectId } = useProject()
  const mayWrite = useCan('prompts:write')
  const promptsets = usePromptsets(projectId)
  const create = useCreatePromptset(projectId)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) }, { onSuccess: () => (setName(''), setDescription('')) })
  }

  return (
    <section className="page" aria-labelledby="prompts-title">
      <div className="page-header">
        <h1 id="prompts-title">Prompts</h1>
        <span className="muted">Registries of versioned prompts; SDKs read the live version (or a version they name).</span>
      </div>
      {promptsets.isPending && <Loading label="Loading prompt registries" />}
      {promptsets.isError && <ErrorMessage error={promptsets.error} what="prompt registries" />}
      {promptsets.data &&
        (promptsets.data.length === 0 ? (
          <Empty>No prompt registry in this project yet.</Empty>
        ) : (
          <table className="list-table" aria-label="Prompt registries">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Id (for the SDK)</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {promptsets.data.map((promptset) => (
                <tr key={promptset.id}>
                  <td>
                    <Link to={projectPath(`/prompts/${promptset.id}`, projectId)}>{promptset.name}</Link>
                  </td>
                  <td>{promptset.description || <span className="muted">—</span>}</td>
                  <td>
                    <code>{promptset.id}</code>
                  </td>
                  <td>{formatTime(promptset.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {mayWrite && (
        <form className="card form" onSubmit={submit} aria-labelledby="new-promptset-title">
          <h2 id="new-promptset-title">New registry</h2>
          <label>
            <span>Name</span>
            <input required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
          </label>
          <label>
            <span>Description</span>
            <input maxLength={2000} value={description} onChange={(event) => setDescription(event.target.value)} />
          </label>
          {create.isError && <ErrorMessage error={create.error} what="the registry" />}
          <button type="submit" className="button primary" disabled={create.isPending || name.trim() === ''}>
            Create registry
          </button>
        </form>
      )}
    </section>
  )
}
