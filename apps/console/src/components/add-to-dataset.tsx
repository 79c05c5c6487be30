import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useAddItems, useCreateDataset, useDatasets } from '../api/datasets.api.ts'
import { projectPath } from './project-scope.tsx'

const newDataset = '__new__'

/**
 * "Add to dataset" on a trace or a span: the item takes the LLM call's messages as its input and
 * its answer as the expected output (the server reads them), and keeps the link to the trace or span.
 */
export function AddToDataset({ projectId, traceId, spanId }: { projectId: string; traceId: string; spanId?: string }) {
  const [open, setOpen] = useState(false)
  const datasets = useDatasets(projectId)
  const create = useCreateDataset(projectId)
  const add = useAddItems(projectId)
  const [choice, setChoice] = useState('')
  const [name, setName] = useState('')
  const what = spanId ? 'span' : 'trace'
  const chosen = choice || datasets.data?.[0]?.id || newDataset

  async function submit(event: FormEvent) {
    event.preventDefault()
    const datasetId = chosen === newDataset ? (await create.mutateAsync({ name: name.trim() })).id : chosen
    add.mutate({ datasetId, items: [{ sourceTraceId: traceId, ...(spanId ? { sourceSpanId: spanId } : {}) }] })
  }

  if (!open) {
    return (
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Add {what} to dataset
      </button>
    )
  }
  const added = add.data?.items[0]
  return (
    <form className="inline-form add-to-dataset" onSubmit={(event) => void submit(event)} aria-label={`Add this ${what} to a dataset`}>
      <label>
        <span>Dataset</span>
        <select aria-label="Dataset" value={chosen} onChange={(event) => setChoice(event.target.value)}>
          {(datasets.data ?? []).map((dataset) => (
            <option key={dataset.id} value={dataset.id}>
              {dataset.name}
            </option>
          ))}
          <option value={newDataset}>New dataset…</option>
        </select>
      </label>
      {chosen === newDataset && (
        <label>
          <span>Name</span>
          <input required value={name} onChange={(event) => setName(event.target.value)} />
        </label>
      )}
      <button type="submit" className="button primary" disabled={add.isPending || create.isPending}>
        Add
      </button>
      <button type="button" className="button ghost" onClick={() => (setOpen(false), add.reset())}>
        Close
      </button>
      {added && (
        <p role="status" className="success">
          Added as item <code>{added.id.slice(0, 8)}</code> (version {add.data?.version}).{' '}
          <Link to={projectPath(`/datasets/${added.datasetId}`, projectId)}>Open the dataset</Link>
        </p>
      )}
      {(add.error ?? create.error) && (
        <p role="alert" className="error-message">
          {(add.error ?? create.error)?.message}
        </p>
      )}
    </form>
  )
}
