import { useId, useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useEvaluatorNames } from '../api/evaluators.api.ts'
import { useAnnotate, useCreateScoreConfig, useDeleteScore, useScoreConfigs, annotationId, type NewScoreConfig } from '../api/scores.api.ts'
import type { Score, ScoreConfig, ScoreDataType } from '../api/types.ts'
import { formatTime } from '../lib/format.ts'
import { authorText, evaluatorOf } from '../lib/score-format.ts'
import { projectPath } from './project-scope.tsx'
import { ScoreValue, Thumb } from './score-value.tsx'
import { ErrorMessage } from './status.tsx'
import { useCan } from './can.tsx'

const sourceNames = { api: 'API', annotation: 'annotation', eval: 'LLM judge' } as const

/**
 * The scores of a trace or of one span, and one input per configured score to give one: thumbs
 * for a boolean, a number within its range, a category from its list; with a comment.
 */
export function ScorePanel({ projectId, traceId, spanId, scores, subject }: { projectId: string; traceId: string; spanId?: string | undefined; scores: Score[]; subject: string }) {
  const configs = useScoreConfigs(projectId)
  const annotate = useAnnotate(projectId, traceId)
  const remove = useDeleteScore(projectId, traceId)
  const evaluatorNames = useEvaluatorNames(projectId)
  // A viewer reads scores; giving, configuring and deleting them is a member's (scores:write).
  const mayScore = useCan('scores:write', projectId)
  const [comment, setComment] = useState('')
  const commentId = useId()
  const mine = (name: string) => scores.find((score) => score.id === annotationId({ traceId, spanId, name }))
  const give = (name: string, value: number | boolean | string) =>
    annotate.mutate({ traceId, spanId, name, value, comment: comment.trim() || undefined }, { onSuccess: () => setComment('') })

  return (
    <section className="panel-section score-panel" aria-label={`Scores of ${subject}`}>
      <h3>Scores</h3>
      {scores.length === 0 ? (
        <p className="muted">No scores yet.</p>
      ) : (
        <ul className="score-list" aria-label={`Given scores of ${subject}`}>
          {scores.map((score) => {
            const author = authorText(score, evaluatorNames)
            const evaluatorId = evaluatorOf(score)
            return (
              <li key={score.id}>
                <span className="score-chip" title={`${score.dataType}${score.author ? `, by ${score.author}` : ''}`}>
                  <strong>{score.name}</strong> <ScoreValue score={score} />
                </span>
                <span className={score.source === 'eval' ? 'badge neutral' : 'badge muted'}>{sourceNames[score.source]}</span>
                {author &&
                  (evaluatorId !== null && (score.evaluatorName || evaluatorNames.has(evaluatorId)) ? (
                    <Link className="muted" to={projectPath(`/evaluators/${evaluatorId}`, projectId)}>
                      {author}
                    </Link>
                  ) : (
                    <span className="muted">{author}</span>
                  ))}
                <time className="muted" dateTime={score.updatedAt}>
                  {formatTime(score.updatedAt)}
                </time>
                {mayScore && (
                  <button type="button" className="button ghost small" aria-label={`Delete the score ${score.name}`} disabled={remove.isPending} onClick={() => remove.mutate(score.id)}>
                    ×
                  </button>
                )}
                {score.comment && <p className="score-comment">{score.comment}</p>}
              </li>
            )
          })}
        </ul>
      )}
      {configs.isError && <ErrorMessage error={configs.error} what="the score configurations" />}
      {mayScore && configs.data && configs.data.length > 0 && (
        <div className="annotate" role="group" aria-label={`Score ${subject}`}>
          {configs.data.map((config) => (
            <ScoreInput key={config.id} config={config} current={mine(config.name)} disabled={annotate.isPending} onGive={(value) => give(config.name, value)} />
          ))}
          <label className="grow" htmlFor={commentId}>
            <span>Comment (saved with the next score you give)</span>
          </label>
          <textarea id={commentId} rows={2} value={comment} onChange={(event) => setComment(event.target.value)} />
        </div>
      )}
      {annotate.isError && <ErrorMessage error={annotate.error} what="the score" />}
      {remove.isError && <ErrorMessage error={remove.error} what="the deletion" />}
      {mayScore && configs.data && <ConfigureScore projectId={projectId} none={configs.data.length === 0} />}
    </section>
  )
}

function ScoreInput({ config, current, disabled, onGive }: { config: ScoreConfig; current: Score | undefined; disabled: boolean; onGive: (value: number | boolean | string) => void }) {
  const [number, setNumber] = useState(current?.dataType === 'numeric' ? String(current.value) : '')
  const inputId = useId()
  const range = config.minValue !== null || config.maxValue !== null ? ` (${config.minValue ?? '…'}–${config.maxValue ?? '…'})` : ''
  return (
    <div className="score-input">
      <label htmlFor={inputId}>
        {config.name}
        {range}
      </label>
      {config.dataType === 'boolean' && (
        <span className="inline" id={inputId}>
          {[true, false].map((value) => (
            <button key={String(value)} type="button" className="button small" aria-pressed={current?.value === value} aria-label={`${config.name}: ${value ? 'thumbs up' : 'thumbs down'}`} disabled={disabled} onClick={() => onGive(value)}>
              <Thumb up={value} />
            </button>
          ))}
        </span>
      )}
      {config.dataType === 'numeric' && (
        <form
          className="inline"
          onSubmit={(event: FormEvent) => {
            event.preventDefault()
            if (number.trim() !== '' && Number.isFinite(Number(number))) onGive(Number(number))
          }}
        >
          <input id={inputId} type="number" step="any" min={config.minValue ?? undefined} max={config.maxValue ?? undefined} value={number} onChange={(event) => setNumber(event.target.value)} />
          <button type="submit" className="button small" disabled={disabled || number.trim() === ''} aria-label={`Save ${config.name}`}>
            Save
          </button>
        </form>
      )}
      {config.dataType === 'categorical' && (
        <select id={inputId} value={typeof current?.value === 'string' ? current.value : ''} disabled={disabled} onChange={(event) => event.target.value !== '' && onGive(event.target.value)}>
          <option value="">Choose…</option>
          {(config.categories ?? []).map((category) => (
            <option key={category.label} value={category.label}>
              {category.label}
            </option>
          ))}
        </select>
      )}
    </div>
  )
}

/** `good=1, bad=0` as categories. */
function parseCategories(text: string): Array<{ label: string; value: number }> | undefined {
  const categories = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part, index) => {
      const at = part.lastIndexOf('=')
      return at > 0 ? { label: part.slice(0, at).trim(), value: Number(part.slice(at + 1)) } : { label: part, value: index }
    })
  return categories.length === 0 || categories.some((category) => !Number.isFinite(category.value)) ? undefined : categories
}

function ConfigureScore({ projectId, none }: { projectId: string; none: boolean }) {
  const create = useCreateScoreConfig(projectId)
  const [name, setName] = useState('')
  const [dataType, setDataType] = useState<ScoreDataType>('boolean')
  const [min, setMin] = useState('')
  const [max, setMax] = useState('')
  const [categories, setCategories] = useState('')
  function submit(event: FormEvent) {
    event.preventDefault()
    const config: NewScoreConfig = { name: name.trim(), dataType }
    if (dataType === 'numeric') {
      if (min !== '') config.minValue = Number(min)
      if (max !== '') config.maxValue = Number(max)
    }
    if (dataType === 'categorical') {
      const parsed = parseCategories(categories)
      if (parsed) config.categories = parsed
    }
    create.mutate(config, { onSuccess: () => setName('') })
  }
  return (
    <details className="configure-score" open={none}>
      <summary>{none ? 'No score is configured for this project yet: configure one' : 'Configure another score'}</summary>
      <form className="filter-row" onSubmit={submit} aria-label="Configure a score">
        <label>
          <span>Name</span>
          <input value={name} onChange={(event) => setName(event.target.value)} placeholder="helpful" required />
        </label>
        <label>
          <span>Type</span>
          <select value={dataType} onChange={(event) => setDataType(event.target.value as ScoreDataType)}>
            <option value="boolean">Thumbs (boolean)</option>
            <option value="numeric">Number</option>
            <option value="categorical">Category</option>
          </select>
        </label>
        {dataType === 'numeric' && (
          <>
            <label>
              <span>Min</span>
              <input inputMode="decimal" value={min} onChange={(event) => setMin(event.target.value)} />
            </label>
            <label>
              <span>Max</span>
              <input inputMode="decimal" value={max} onChange={(event) => setMax(event.target.value)} />
            </label>
          </>
        )}
        {dataType === 'categorical' && (
          <label className="grow">
            <span>Categories (label=value, …)</span>
            <input value={categories} onChange={(event) => setCategories(event.target.value)} placeholder="correct=1, partly=0.5, wrong=0" />
          </label>
        )}
        <button type="submit" className="button" disabled={create.isPending || name.trim() === ''}>
          Add score
        </button>
      </form>
      {create.isError && <ErrorMessage error={create.error} what="the score configuration" />}
    </details>
  )
}
