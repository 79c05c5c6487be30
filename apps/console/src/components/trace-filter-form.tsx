import { useState, type FormEvent } from 'react'
import { isoOf, localInput } from '../lib/local-time.ts'
import { activeFilterCount, defaultTraceFilters, timeRanges, type TimeRange, type TraceFilters } from '../lib/trace-filters.ts'

export const rangeLabels: Record<TimeRange, string> = { '15m': 'Last 15 minutes', '1h': 'Last hour', '6h': 'Last 6 hours', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' }

/**
 * The query API's filters as a form. It edits a copy; Apply writes it to the URL (a new history
 * entry, so Back undoes a filter), and the page reads the URL.
 *
 * With `scope`, it is the part of a monitor's or a widget's definition that says which traces
 * count: no time window (the monitor or dashboard has its own), no bounds on duration, cost or
 * score (those are what a metric measures), and every change handed over at once (no Apply),
 * as the field of a larger form.
 */
export function TraceFilterForm({ filters, onApply, scope = false, label = 'Trace filters' }: { filters: TraceFilters; onApply: (filters: TraceFilters) => void; scope?: boolean; label?: string }) {
  const [draft, setDraftState] = useState<TraceFilters>(filters)
  const [custom, setCustom] = useState(Boolean(filters.from || filters.to))
  const [attrDraft, setAttrDraft] = useState('')
  const setDraft = (next: (current: TraceFilters) => TraceFilters) => {
    const value = next(draft)
    setDraftState(value)
    if (scope) onApply(value)
  }
  const set = <K extends keyof TraceFilters>(key: K, value: TraceFilters[K]) => setDraft((current) => ({ ...current, [key]: value }))
  const text = (key: 'q' | 'service' | 'model' | 'vendor' | 'name' | 'session' | 'user' | 'minDurationMs' | 'minCost' | 'scoreName' | 'minScore' | 'maxScore' | 'scoreValue') => ({
    value: draft[key] ?? '',
    onChange: (event: { target: { value: string } }) => set(key, event.target.value === '' ? undefined : event.target.value),
  })

  function addAttribute() {
    const pair = attrDraft.trim()
    if (!pair.includes('=') || pair.startsWith('=')) return
    set('attr', [...draft.attr, pair])
    setAttrDraft('')
  }

  function submit(event: FormEvent) {
    event.preventDefault()
    const pending = attrDraft.trim()
    const attr = pending.includes('=') && !pending.startsWith('=') ? [...draft.attr, pending] : draft.attr
    setAttrDraft('')
    onApply({ ...draft, attr })
  }

  const count = activeFilterCount(filters)
  const rangeValue = custom ? 'custom' : (draft.range ?? '')

  return (
    <form className={scope ? 'filters scope' : 'filters'} onSubmit={submit} aria-label={label} role={scope ? 'group' : 'search'}>
      <div className="filter-row">
        <label className="grow">
          <span>Search</span>
          <input type="search" placeholder="Text in span names, attributes, messages…" {...text('q')} />
        </label>
        {!scope && (
          <label>
            <span>Time</span>
            <select
              value={rangeValue}
              onChange={(event) => {
                const value = event.target.value
                setCustom(value === 'custom')
                setDraft((current) => ({ ...current, range: value in timeRanges ? (value as TimeRange) : undefined, ...(value === 'custom' ? {} : { from: undefined, to: undefined }) }))
              }}
            >
              <option value="">All time</option>
              {Object.entries(rangeLabels).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
              <option value="custom">Custom…</option>
            </select>
          </label>
        )}
        {custom && !scope && (
          <>
            <label>
              <span>From</span>
              <input type="datetime-local" value={localInput(draft.from)} onChange={(event) => set('from', isoOf(event.target.value))} />
            </label>
            <label>
              <span>To</span>
              <input type="datetime-local" value={localInput(draft.to)} onChange={(event) => set('to', isoOf(event.target.value))} />
            </label>
          </>
        )}
        <label>
          <span>Status</span>
          <select value={draft.status ?? ''} onChange={(event) => set('status', event.target.value === 'error' || event.target.value === 'ok' ? event.target.value : undefined)}>
            <option value="">Any</option>
            <option value="error">Traces with an error</option>
            <option value="ok">Traces without errors</option>
          </select>
        </label>
        <label>
          <span>Service</span>
          <input {...text('service')} />
        </label>
        <label>
          <span>Model</span>
          <input {...text('model')} />
        </label>
      </div>
      <details
        className="more-filters"
        open={scope || Boolean(filters.vendor || filters.name || filters.session || filters.user || filters.minDurationMs || filters.minCost || filters.attr.length || filters.scoreName)}
      >
        <summary>More filters</summary>
        <div className="filter-row">
          <label>
            <span>Vendor</span>
            <input {...text('vendor')} />
          </label>
          <label>
            <span>Root name</span>
            <input {...text('name')} />
          </label>
          <label>
            <span>Session</span>
            <input {...text('session')} />
          </label>
          <label>
            <span>User</span>
            <input {...text('user')} />
          </label>
          {!scope && (
            <>
              <label>
                <span>Min duration (ms)</span>
                <input inputMode="decimal" {...text('minDurationMs')} />
              </label>
              <label>
                <span>Min cost ($)</span>
                <input inputMode="decimal" {...text('minCost')} />
              </label>
              <label>
                <span>Score</span>
                <input placeholder="name" {...text('scoreName')} />
              </label>
              <label>
                <span>Score at least</span>
                <input inputMode="decimal" {...text('minScore')} />
              </label>
              <label>
                <span>Score at most</span>
                <input inputMode="decimal" {...text('maxScore')} />
              </label>
              <label>
                <span>Score label</span>
                <input placeholder="category or true/false" {...text('scoreValue')} />
              </label>
            </>
          )}
          <label className="grow">
            <span>Attribute (key=value)</span>
            <span className="inline">
              <input
                value={attrDraft}
                placeholder="llm.request.type=chat"
                onChange={(event) => setAttrDraft(event.target.value)}
                onKeyDown={(event) => {
                  if (event.key === 'Enter' && attrDraft.trim() !== '') {
                    event.preventDefault()
                    addAttribute()
                  }
                }}
              />
              <button type="button" className="button" onClick={addAttribute}>
                Add
              </button>
            </span>
          </label>
        </div>
        {draft.attr.length > 0 && (
          <ul className="chips" aria-label="Attribute filters">
            {draft.attr.map((pair, index) => (
              <li key={`${pair}-${index}`} className="chip">
                <code>{pair}</code>
                <button
                  type="button"
                  aria-label={`Remove ${pair}`}
                  onClick={() =>
                    set(
                      'attr',
                      draft.attr.filter((_, i) => i !== index),
                    )
                  }
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
      </details>
      {!scope && (
        <div className="filter-actions">
          <button type="submit" className="button primary">
            Apply
          </button>
          <button type="button" className="button" disabled={count === 0} onClick={() => onApply({ ...defaultTraceFilters, sort: filters.sort, order: filters.order, live: filters.live })}>
            Clear filters
          </button>
          {count > 0 && <span className="muted">{count === 1 ? '1 filter' : `${count} filters`} applied</span>}
        </div>
      )}
    </form>
  )
}
