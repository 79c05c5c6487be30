import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useAnnotationQueues, useCreateAnnotationQueue } from '../api/annotation-queues.api.ts'
import { useScoreConfigs } from '../api/scores.api.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatCount } from '../lib/format.ts'

/** The project's annotation queues with their progress, and a form to make one. */
export default function AnnotationQueuesPage() {
  const { projectId } = useProject()
  const queues = useAnnotationQueues(projectId)
  return (
    <section className="page" aria-labelledby="queues-title">
      <div className="page-header">
        <h1 id="queues-title">Annotation queues</h1>
      </div>
      <p className="muted">Traces and sessions handed to people to score. Add items from the API, a trace-list filter, or an evaluator’s low scores.</p>
      {queues.isPending ? (
        <Loading label="Loading the queues" />
      ) : queues.isError ? (
        <ErrorMessage error={queues.error} what="the queues" />
      ) : queues.data.length === 0 ? (
        <p className="muted">No queue yet.</p>
      ) : (
        <table className="list-table" aria-label="Annotation queues">
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" className="end">Done</th>
              <th scope="col" className="end">Waiting</th>
            </tr>
          </thead>
          <tbody>
            {queues.data.map((queue) => (
              <tr key={queue.id}>
                <td>
                  <Link to={projectPath(`/annotation-queues/${queue.id}`, projectId)}>{queue.name}</Link>
                  {queue.description && <div className="muted small">{queue.description}</div>}
                </td>
                <td className="end">
                  {formatCount(queue.progress.completed)} / {formatCount(queue.progress.total)}
                </td>
                <td className="end">{formatCount(queue.progress.pending)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NewQueue projectId={projectId} />
    </section>
  )
}

function NewQueue({ projectId }: { projectId: string }) {
  const configs = useScoreConfigs(projectId)
  const create = useCreateAnnotationQueue(projectId)
  const [name, setName] = useState('')
  const [chosen, setChosen] = useState<string[]>([])
  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ name, scoreConfigIds: chosen }, { onSuccess: () => (setName(''), setChosen([])) })
  }
  return (
    <form className="card form" onSubmit={submit} aria-label="New annotation queue">
      <h2>New queue</h2>
      <label>
        Name
        <input required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <fieldset>
        <legend>Scores to give</legend>
        {(configs.data ?? []).length === 0 && <p className="muted small">Configure a score in Settings first.</p>}
        {(configs.data ?? []).map((config) => (
          <label key={config.id} className="inline">
            <input type="checkbox" checked={chosen.includes(config.id)} onChange={(event) => setChosen(event.target.checked ? [...chosen, config.id] : chosen.filter((id) => id !== config.id))} /> {config.name}
          </label>
        ))}
      </fieldset>
      <button type="submit" className="button primary" disabled={create.isPending}>
        Make queue
      </button>
      {create.isError && <ErrorMessage error={create.error} what="the queue" />}
    </form>
  )
}
