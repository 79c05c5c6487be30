import { useMemo, useState, type FormEvent } from 'react'
import { Link, useParams, useSearchParams } from 'react-router'
import { previewPrompt, useCreatePromptVersion, usePromptset, useSetLiveVersion } from '../api/prompts.api.ts'
import type { Prompt } from '../api/types.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { PromptLabels } from '../components/prompt-labels.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatTime } from '../lib/format.ts'
import { sideBySide } from '../lib/prompt-diff.ts'
import { Can, useCan } from '../components/can.tsx'

export default function PromptsetPage() {
  const { promptsetId = '' } = useParams()
  const { projectId } = useProject()
  const mayMakeLive = useCan('prompts:label-production')
  const promptset = usePromptset(projectId, promptsetId)
  const setLive = useSetLiveVersion(projectId, promptsetId)
  const [params, setParams] = useSearchParams()

  if (promptset.isPending) return <Loading label="Loading the registry" />
  if (promptset.isError) return <ErrorMessage error={promptset.error} what={`prompt registry ${promptsetId}`} />

  const versions = [...promptset.data.prompts].sort((a, b) => b.version - a.version)
  const latest = versions[0]
  // The compared versions live in the URL (?left=&right=): the previous and the latest by default.
  const pick = (name: string, fallback: Prompt | undefined) => versions.find((prompt) => String(prompt.version) === params.get(name)) ?? fallback
  const right = pick('right', latest)
  const left = pick('left', versions[1] ?? latest)
  const choose = (name: 'left' | 'right', version: string) => {
    const next = new URLSearchParams(params)
    next.set(name, version)
    setParams(next, { replace: true })
  }

  return (
    <section className="page" aria-labelledby="promptset-title">
      <div className="page-header">
        <Link to={projectPath('/prompts', projectId)} className="back">
          ← Prompts
        </Link>
        <h1 id="promptset-title">{promptset.data.name}</h1>
        <span className="muted">
          id <code>{promptset.data.id}</code>
        </span>
      </div>
      {promptset.data.description && <p>{promptset.data.description}</p>}

      <h2>Versions</h2>
      {versions.length === 0 ? (
        <p className="muted">No version yet: create the first below.</p>
      ) : (
        <table className="list-table" aria-label="Versions">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Model</th>
              <th scope="col">Note</th>
              <th scope="col">Created</th>
              <th scope="col">Live</th>
            </tr>
          </thead>
          <tbody>
            {versions.map((prompt) => (
              <tr key={prompt.id} className={prompt.live ? 'live-row' : undefined}>
                <td>
                  v{prompt.version}
                  {(prompt.labels ?? []).map((label) => (
                    <span key={label} className="tag small">
                      {label}
                    </span>
                  ))}
                </td>
                <td>{prompt.model}</td>
                <td>{prompt.note || <span className="muted">—</span>}</td>
                <td>{formatTime(prompt.createdAt)}</td>
                <td>
                  {prompt.live ? (
                    <span className="badge ok">live</span>
                  ) : !mayMakeLive ? null : (
                    <button type="button" className="button small" disabled={setLive.isPending} onClick={() => setLive.mutate(prompt.version)} aria-label={`Make version ${prompt.version} live`}>
                      Make live
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {setLive.isError && <ErrorMessage error={setLive.error} what="the live version" />}

      <PromptLabels projectId={projectId} promptsetId={promptsetId} versions={versions} />

      {left && right && (
        <section aria-labelledby="compare-title" className="compare">
          <h2 id="compare-title">Compare</h2>
          <div className="compare-pickers">
            <VersionSelect label="Older" versions={versions} value={left.version} onChange={(version) => choose('left', version)} />
            <VersionSelect label="Newer" versions={versions} value={right.version} onChange={(version) => choose('right', version)} />
          </div>
          <PromptDiff older={left} newer={right} />
        </section>
      )}

      <div className="two-columns">
        <Can permission="prompts:write">
          <NewVersionForm projectId={projectId} promptsetId={promptsetId} base={latest} />
        </Can>
        {versions.length > 0 && <PreviewForm projectId={projectId} promptsetId={promptsetId} versions={versions} />}
      </div>
    </section>
  )
}

function VersionSelect({ label, versions, value, onChange }: { label: string; versions: Prompt[]; value: number; onChange: (version: string) => void }) {
  return (
    <label>
      <span>{label}</span>
      <select value={value} onChange={(event) => onChange(event.target.value)}>
        {versions.map((prompt) => (
          <option key={prompt.id} value={prompt.version}>
            v{prompt.version}
            {prompt.live ? ' (live)' : ''}
          </option>
        ))}
      </select>
    </label>
  )
}

function PromptDiff({ older, newer }: { older: Prompt; newer: Prompt }) {
  const diff = useMemo(() => sideBySide(older.value, newer.value), [older.value, newer.value])
  return (
    <div className="diff" aria-label={`Version ${older.version} and version ${newer.version} side by side`}>
      {[
        { prompt: older, segments: diff.left, side: 'old' },
        { prompt: newer, segments: diff.right, side: 'new' },
      ].map(({ prompt, segments, side }) => (
        <figure key={side} className={`diff-side ${side}`}>
          <figcaption>
            v{prompt.version} · {prompt.model}
            {prompt.live ? ' · live' : ''}
          </figcaption>
          <pre>
            {segments.map((segment, index) =>
              segment.change === 'same' ? (
                <span key={index}>{segment.text}</span>
              ) : segment.change === 'removed' ? (
                <del key={index}>{segment.text}</del>
              ) : (
                <ins key={index}>{segment.text}</ins>
              ),
            )}
          </pre>
        </figure>
      ))}
      {!diff.changed && <p className="muted">The two versions have the same text.</p>}
    </div>
  )
}

function NewVersionForm({ projectId, promptsetId, base }: { projectId: string; promptsetId: string; base: Prompt | undefined }) {
  const create = useCreatePromptVersion(projectId, promptsetId)
  const [value, setValue] = useState(base?.value ?? '')
  const [model, setModel] = useState(base?.model ?? '')
  const [note, setNote] = useState('')
  const [live, setLive] = useState(false)

  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ value, model: model.trim(), ...(note.trim() ? { note: note.trim() } : {}), live }, { onSuccess: () => (setNote(''), setLive(false)) })
  }

  return (
    <form className="card form" onSubmit={submit} aria-labelledby="new-version-title">
      <h2 id="new-version-title">New version</h2>
      <label>
        <span>Prompt</span>
        <textarea required rows={8} value={value} onChange={(event) => setValue(event.target.value)} />
      </label>
      <p className="muted small">
        Variables are written <code>{'${name}'}</code> (or <code>{'{{name}}'}</code>).
      </p>
      <label>
        <span>Model</span>
        <input required value={model} onChange={(event) => setModel(event.target.value)} />
      </label>
      <label>
        <span>Note</span>
        <input value={note} onChange={(event) => setNote(event.target.value)} />
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={live} onChange={(event) => setLive(event.target.checked)} />
        <span>Make it the live version</span>
      </label>
      {create.isError && <ErrorMessage error={create.error} what="the version" />}
      {create.isSuccess && (
        <p role="status" className="success">
          Created version {create.data.version}
          {create.data.live ? ', now live' : ''}.
        </p>
      )}
      <button type="submit" className="button primary" disabled={create.isPending || value === '' || model.trim() === ''}>
        Create version
      </button>
    </form>
  )
}

function PreviewForm({ projectId, promptsetId, versions }: { projectId: string; promptsetId: string; versions: Prompt[] }) {
  const [version, setVersion] = useState(String((versions.find((prompt) => prompt.live) ?? versions[0])?.version ?? ''))
  const prompt = versions.find((candidate) => String(candidate.version) === version)
  const [values, setValues] = useState<Record<string, string>>({})
  const [result, setResult] = useState<{ text: string } | { error: string } | null>(null)

  async function submit(event: FormEvent) {
    event.preventDefault()
    if (!prompt) return
    try {
      const filled = await previewPrompt(projectId, promptsetId, prompt.version, Object.fromEntries(prompt.variables.map((name) => [name, values[name] ?? ''])))
      setResult({ text: filled.prompts[0]?.value ?? '' })
    } catch (error) {
      setResult({ error: error instanceof Error ? error.message : String(error) })
    }
  }

  return (
    <form className="card form" onSubmit={(event) => void submit(event)} aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <label>
        <span>Version</span>
        <select value={version} onChange={(event) => (setVersion(event.target.value), setResult(null))}>
          {versions.map((candidate) => (
            <option key={candidate.id} value={candidate.version}>
              v{candidate.version}
              {candidate.live ? ' (live)' : ''}
            </option>
          ))}
        </select>
      </label>
      {prompt && prompt.variables.length === 0 && <p className="muted">This version has no variables.</p>}
      {prompt?.variables.map((name) => (
        <label key={name}>
          <span>
            <code>{name}</code>
          </span>
          <input value={values[name] ?? ''} onChange={(event) => setValues((current) => ({ ...current, [name]: event.target.value }))} />
        </label>
      ))}
      <button type="submit" className="button primary">
        Preview
      </button>
      {result && 'text' in result && (
        <pre className="preview" aria-label="The prompt with its variables filled">
          {result.text}
        </pre>
      )}
      {result && 'error' in result && (
        <p className="error-message" role="alert">
          {result.error}
        </p>
      )}
    </form>
  )
}
