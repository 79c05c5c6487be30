import { useState, type FormEvent } from 'react'
import { useDeleteModelPrice, useModelPrices, useSaveModelPrice } from '../api/model-prices.api.ts'
import type { ModelPrice, ModelPriceInput, TokenPrices } from '../api/types.ts'
import { formatCost, formatTime } from '../lib/format.ts'
import { isoOf, localInput } from '../lib/local-time.ts'
import { ErrorMessage, Loading } from './status.tsx'

/**
 * A project's own model prices: listed, added, changed in place and deleted. They price the spans
 * stored from then on (within 10 s); spans already stored keep their cost.
 */
export function ModelPriceManager({ projectId }: { projectId: string }) {
  const prices = useModelPrices(projectId)
  const remove = useDeleteModelPrice(projectId)
  // The price being changed, or null while the form adds a new one.
  const [editing, setEditing] = useState<ModelPrice | null>(null)
  // Said after the form, which is made anew for the next price once one is saved.
  const [notice, setNotice] = useState<string | null>(null)

  return (
    <div className="model-prices">
      {prices.isPending && <Loading label="Loading model prices" />}
      {prices.isError && <ErrorMessage error={prices.error} what="model prices" />}
      {prices.data && (
        <table className="list-table" aria-label="Model prices">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="numeric">
                Input
              </th>
              <th scope="col" className="numeric">
                Output
              </th>
              <th scope="col" className="numeric">
                Cache read
              </th>
              <th scope="col" className="numeric">
                Cache write
              </th>
              <th scope="col" className="numeric">
                Reasoning
              </th>
              <th scope="col">From</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {prices.data.length === 0 && (
              <tr>
                <td colSpan={8} className="muted">
                  No price of this project's own: the built-in price table prices every model.
                </td>
              </tr>
            )}
            {prices.data.map((price) => (
              <tr key={price.id} className={editing?.id === price.id ? 'chosen' : undefined}>
                <td>
                  <code>{price.model}</code>
                  {price.match === 'glob' && <span className="tag small">pattern</span>}
                </td>
                <td className="numeric">{formatCost(price.usdPerMillionTokens.input)}</td>
                <td className="numeric">{formatCost(price.usdPerMillionTokens.output)}</td>
                <td className="numeric">{priceOrDefault(price.usdPerMillionTokens.cacheRead, 'as input')}</td>
                <td className="numeric">{priceOrDefault(price.usdPerMillionTokens.cacheWrite, 'as input')}</td>
                <td className="numeric">{priceOrDefault(price.usdPerMillionTokens.reasoning, 'as output')}</td>
                <td>{price.effectiveFrom ? formatTime(price.effectiveFrom) : <span className="muted">always</span>}</td>
                <td className="actions">
                  <button type="button" className="button small" aria-label={`Edit the price of ${price.model}`} onClick={() => (setEditing(price), setNotice(null))}>
                    Edit
                  </button>
                  <button
                    type="button"
                    className="button small danger"
                    disabled={remove.isPending}
                    aria-label={`Delete the price of ${price.model}`}
                    onClick={() => {
                      if (!window.confirm(`Delete the price of ${price.model}? Spans stored from then on are priced by the built-in table (if it knows the model).`)) return
                      remove.mutate(price.id, { onSuccess: () => setEditing((current) => (current?.id === price.id ? null : current)) })
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted small">USD per million tokens. A change prices the spans stored from then on (within 10 seconds); spans already stored keep their cost.</p>
      {remove.isError && <ErrorMessage error={remove.error} action="delete" what="the price" />}
      <ModelPriceForm
        key={editing?.id ?? 'new'}
        projectId={projectId}
        editing={editing}
        onChange={() => setNotice(null)}
        onDone={(message) => (setEditing(null), setNotice(message ?? null))}
      />
      {notice && (
        <p role="status" className="success">
          {notice}
        </p>
      )}
    </div>
  )
}

function priceOrDefault(usd: number | null, fallback: string) {
  return usd === null ? <span className="muted">{fallback}</span> : formatCost(usd)
}

const optional = (price: number | null) => (price === null ? '' : String(price))

interface ModelPriceFormProps {
  projectId: string
  editing: ModelPrice | null
  onChange: () => void
  /** Saved (with what to say) or cancelled. */
  onDone: (message?: string) => void
}

function ModelPriceForm({ projectId, editing, onChange, onDone }: ModelPriceFormProps) {
  const save = useSaveModelPrice(projectId)
  const start = editing?.usdPerMillionTokens
  const [model, setModel] = useState(editing?.model ?? '')
  const [match, setMatch] = useState<ModelPrice['match']>(editing?.match ?? 'exact')
  const [rates, setRates] = useState<Record<keyof TokenPrices, string>>({
    input: start ? String(start.input) : '',
    output: start ? String(start.output) : '',
    cacheRead: optional(start?.cacheRead ?? null),
    cacheWrite: optional(start?.cacheWrite ?? null),
    reasoning: optional(start?.reasoning ?? null),
  })
  const [effectiveFrom, setEffectiveFrom] = useState(localInput(editing?.effectiveFrom))
  const title = editing ? `Change the price of ${editing.model}` : 'Add a model price'

  function submit(event: FormEvent) {
    event.preventDefault()
    const orNull = (text: string) => (text.trim() === '' ? null : Number(text))
    const price: ModelPriceInput = {
      model: model.trim(),
      match,
      usdPerMillionTokens: { input: Number(rates.input), output: Number(rates.output), cacheRead: orNull(rates.cacheRead), cacheWrite: orNull(rates.cacheWrite), reasoning: orNull(rates.reasoning) },
      effectiveFrom: isoOf(effectiveFrom) ?? null,
    }
    save.mutate(
      { id: editing?.id, price },
      {
        onSuccess: (result) => {
          if (!editing) {
            setModel('')
            setRates({ input: '', output: '', cacheRead: '', cacheWrite: '', reasoning: '' })
            setEffectiveFrom('')
          }
          onDone(`${editing ? 'Changed' : 'Added'} the price of ${result.model}.`)
        },
      },
    )
  }

  const rate = (name: keyof TokenPrices, label: string, placeholder?: string) => (
    <label>
      <span>{label}</span>
      <input
        type="number"
        min={0}
        max={1_000_000}
        step="any"
        required={placeholder === undefined}
        placeholder={placeholder}
        value={rates[name]}
        onChange={(event) => (setRates((current) => ({ ...current, [name]: event.target.value })), onChange())}
      />
    </label>
  )

  return (
    <form className="form price-form" onSubmit={submit} aria-label={title}>
      <h3>{title}</h3>
      <div className="inline-form">
        <label>
          <span>Model</span>
          <input required maxLength={200} placeholder="ft:gpt-4o-mini:acme or llama3*" value={model} onChange={(event) => (setModel(event.target.value), onChange())} />
        </label>
        <label>
          <span>Match</span>
          <select value={match} onChange={(event) => setMatch(event.target.value === 'glob' ? 'glob' : 'exact')}>
            <option value="exact">The exact name</option>
            <option value="glob">A pattern (* and ?)</option>
          </select>
        </label>
        <label>
          <span>From (optional)</span>
          <input type="datetime-local" value={effectiveFrom} onChange={(event) => setEffectiveFrom(event.target.value)} />
        </label>
      </div>
      <div className="inline-form">
        {rate('input', 'Input $/1M')}
        {rate('output', 'Output $/1M')}
        {rate('cacheRead', 'Cache read $/1M', 'as input')}
        {rate('cacheWrite', 'Cache write $/1M', 'as input')}
        {rate('reasoning', 'Reasoning $/1M', 'as output')}
      </div>
      {save.isError && <ErrorMessage error={save.error} action="save" what="the price" />}
      <div className="button-row">
        <button type="submit" className="button primary" disabled={save.isPending || model.trim() === ''}>
          {editing ? 'Save price' : 'Add price'}
        </button>
        {editing && (
          <button type="button" className="button" onClick={() => onDone()}>
            Cancel
          </button>
        )}
      </div>
    </form>
  )
}
