import { useState, type FormEvent } from 'react'
import { useLabelHistory, useMoveLabel, usePromptLabels, useRemoveLabel } from '../api/prompt-labels.api.ts'
import type { LabelMove, Prompt, PromptLabel } from '../api/types.ts'
import { formatAgo, formatTime } from '../lib/format.ts'
import { ErrorMessage, Loading } from './status.tsx'
import { Can, useCan } from './can.tsx'

interface PromptLabelsProps {
  projectId: string
  promptsetId: string
  /** The promptset's versions, newest first. */
  versions: Prompt[]
}

/**
 * A promptset's labels, each moved to another version or removed in one click, a new one set, and
 * the history of every move. A move says where the page saw the label (expectedVersion): if
 * someone moved it meanwhile the server refuses, and the page shows where it is now.
 */
export function PromptLabels({ projectId, promptsetId, versions }: PromptLabelsProps) {
  const labels = usePromptLabels(projectId, promptsetId)
  const move = useMoveLabel(projectId, promptsetId)
  const remove = useRemoveLabel(projectId, promptsetId)

  return (
    <section aria-labelledby="labels-title" className="card labels">
      <h2 id="labels-title">Labels</h2>
      <p className="muted small">
        A label points at one version; SDKs ask for a label by name. <code>production</code> is the live version, served when they name none.
      </p>
      {labels.isPending && <Loading label="Loading labels" />}
      {labels.isError && <ErrorMessage error={labels.error} what="labels" />}
      {labels.data && (
        <table className="list-table" aria-label="Labels">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Version</th>
              <th scope="col">Moved</th>
              <th scope="col">
                <span className="visually-hidden">Move or remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {labels.data.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  No label yet.
                </td>
              </tr>
            )}
            {labels.data.map((label) => (
              <LabelRow
                key={label.name}
                label={label}
                versions={versions}
                busy={move.isPending || remove.isPending}
                onMove={(version) => {
                  remove.reset()
                  move.mutate({ label: label.name, version, expectedVersion: label.version })
                }}
                onRemove={() => {
                  move.reset()
                  const warning = label.name === 'production' ? ' The registry then has no live version: SDKs that name no version or label get 404 until one is made live.' : ''
                  if (window.confirm(`Remove the label ${label.name} (at v${label.version})?${warning}`)) remove.mutate(label.name)
                }}
              />
            ))}
          </tbody>
        </table>
      )}
      {move.isError && <ErrorMessage error={move.error} action="move" what={`the label ${move.variables.label}`} />}
      {remove.isError && <ErrorMessage error={remove.error} action="remove" what={`the label ${remove.variables}`} />}
      {versions.length > 0 && (
        <Can permission="prompts:write">
          <NewLabelForm projectId={projectId} promptsetId={promptsetId} versions={versions} />
        </Can>
      )}
      <LabelHistoryTable projectId={projectId} promptsetId={promptsetId} />
    </section>
  )
}

function LabelRow({ label, versions, busy, onMove, onRemove }: { label: PromptLabel; versions: Prompt[]; busy: boolean; onMove: (version: number) => void; onRemove: () => void }) {
  const [target, setTarget] = useState(label.version)
  // Moving production changes what the SDKs are served: it needs more than another label.
  const mayMove = useCan(label.name === 'production' ? 'prompts:label-production' : 'prompts:write')
  return (
    <tr>
      <th scope="row">
        <span className="tag">{label.name}</span>
      </th>
      <td>v{label.version}</td>
      <td>
        <time dateTime={label.updatedAt} title={formatTime(label.updatedAt)}>
          {formatAgo(label.updatedAt)}
        </time>
      </td>
      <td className="actions">
        {mayMove && (
          <>
            <select aria-label={`Version for ${label.name}`} value={target} onChange={(event) => setTarget(Number(event.target.value))}>
              {versions.map((prompt) => (
                <option key={prompt.id} value={prompt.version}>
                  v{prompt.version}
                </option>
              ))}
            </select>
            <button type="button" className="button small" disabled={busy || target === label.version} onClick={() => onMove(target)} aria-label={`Move ${label.name} to v${target}`}>
              Move
            </button>
            <button type="button" className="button small danger" disabled={busy} onClick={onRemove} aria-label={`Remove ${label.name}`}>
              Remove
            </button>
          </>
        )}
      </td>
    </tr>
  )
}

function NewLabelForm({ projectId, promptsetId, versions }: PromptLabelsProps) {
  const move = useMoveLabel(projectId, promptsetId)
  const [name, setName] = useState('')
  const [version, setVersion] = useState(String(versions[0]?.version ?? ''))

  function submit(event: FormEvent) {
    event.preventDefault()
    // Only if the label does not exist yet: an existing one is moved from its row.
    move.mutate({ label: name.trim(), version: Number(version), expectedVersion: null }, { onSuccess: () => setName('') })
  }

  return (
    <form className="inline-form label-form" onSubmit={submit} aria-label="Add a label">
      <label>
        <span>New label</span>
        <input required pattern="[a-z0-9_.\-]{1,36}" title="1–36 of a-z 0-9 _ . -" placeholder="staging" value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        <span>At version</span>
        <select value={version} onChange={(event) => setVersion(event.target.value)}>
          {versions.map((prompt) => (
            <option key={prompt.id} value={prompt.version}>
              v{prompt.version}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="button primary" disabled={move.isPending || name.trim() === ''}>
        Add label
      </button>
      {move.isError && <ErrorMessage error={move.error} action="add" what="the label" />}
    </form>
  )
}

function describeMove(move: LabelMove): string {
  if (move.fromVersion === null) return `set at v${move.toVersion}`
  if (move.toVersion === null) return `removed from v${move.fromVersion}`
  return `v${move.fromVersion} → v${move.toVersion}`
}

function LabelHistoryTable({ projectId, promptsetId }: { projectId: string; promptsetId: string }) {
  const history = useLabelHistory(projectId, promptsetId)
  const moves = history.data?.pages.flatMap((page) => page.moves) ?? []
  return (
    <section className="label-history" aria-labelledby="label-history-title">
      <h3 id="label-history-title">History</h3>
      {history.isPending && <Loading label="Loading the label history" />}
      {history.isError && <ErrorMessage error={history.error} what="the label history" />}
      {history.data && (
        <table className="list-table" aria-label="Label history">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Label</th>
              <th scope="col">Change</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {moves.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  No label has moved yet.
                </td>
              </tr>
            )}
            {moves.map((move) => (
              <tr key={move.id}>
                <td>{formatTime(move.movedAt)}</td>
                <td>
                  <span className="tag small">{move.label}</span>
                </td>
                <td>{describeMove(move)}</td>
                <td>{move.movedByUser ? move.movedByUser.name : move.movedByKeyPrefix ? <code>{move.movedByKeyPrefix}…</code> : <span className="muted">outside the API</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {history.hasNextPage && (
        <button type="button" className="button small" disabled={history.isFetchingNextPage} onClick={() => void history.fetchNextPage()}>
          Load older moves
        </button>
      )}
    </section>
  )
}
