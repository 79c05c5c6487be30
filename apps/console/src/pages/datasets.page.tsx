import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useCreateDataset, useDatasets } from '../api/datasets.api.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatCount, formatTime } from '../lib/format.ts'
import { Can } from '../components/can.tsx'

/** The project's datasets, and a form to make one. */
export default function DatasetsPage() {
  const { projectId } = useProject()
  const datasets = useDatasets(projectId)
  const create = useCreateDataset(projectId)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) }, { onSuccess: () => (setName(''), setDescription('')) })
  }

  return (
    <section className="page" aria-labelledby="datasets-title">
      <div className="page-header">
        <h1 id="datasets-title">Datasets</h1>
        <span className="muted">items to run prompt versions over, taken from traces or uploaded as JSONL</span>
      </div>
      {datasets.isPending && <Loading label="Loading the datasets" />}
      {datasets.isError && <ErrorMessage error={datasets.error} what="the datasets" />}
      {datasets.data?.length === 0 && <Empty>No dataset yet: make one below, or add a trace to one from its page.</Empty>}
      {datasets.data && datasets.data.length > 0 && (
        <table className="list-table" aria-label="Datasets">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Items</th>
              <th scope="col">Version</th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {datasets.data.map((dataset) => (
              <tr key={dataset.id}>
                <td>
                  <Link to={projectPath(`/datasets/${dataset.id}`, projectId)}>{dataset.name}</Link>
                  {dataset.description && <div className="muted small">{dataset.description}</div>}
                </td>
                <td>{formatCount(dataset.itemCount)}</td>
                <td>v{dataset.version}</td>
                <td>{formatTime(dataset.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Can permission="datasets:write">
        <form className="card form narrow" onSubmit={submit} aria-labelledby="new-dataset-title">
          <h2 id="new-dataset-title">New dataset</h2>
          <label>
            <span>Name</span>
            <input required value={name} onChange={(event) => setName(event.target.value)} />
          </label>
          <label>
            <span>Description</span>
            <input value={description} onChange={(event) => setDescription(event.target.value)} />
          </label>
          {create.isError && <ErrorMessage error={create.error} what="the dataset" />}
          <button type="submit" className="button primary" disabled={create.isPending || name.trim() === ''}>
            Create dataset
          </button>
        </form>
      </Can>
    </section>
  )
}
