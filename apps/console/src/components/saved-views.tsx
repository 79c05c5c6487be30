import { useEffect, useRef, useState, type FormEvent } from 'react'
import { useSearchParams } from 'react-router'
import { useSaveView, useSavedViews, useSetDefaultView, type SavedView } from '../api/views.api.ts'
import { ErrorMessage } from './status.tsx'

// Saved views of the trace list: its URL parameters (filters and sort) under a name, private or
// shared with the project, and the person's default view, applied when the list opens without
// parameters of its own.

const ownParameters = new Set(['project_id'])

/** The list's parameters as a view's filters (repeated parameters as arrays). */
function filtersOf(params: URLSearchParams): Record<string, string | string[]> {
  const filters: Record<string, string | string[]> = {}
  for (const name of new Set(params.keys())) {
    if (ownParameters.has(name)) continue
    const values = params.getAll(name)
    filters[name] = values.length === 1 ? (values[0] as string) : values
  }
  return filters
}

function paramsOf(view: SavedView, keep: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams()
  for (const name of ownParameters) for (const value of keep.getAll(name)) next.append(name, value)
  for (const [name, value] of Object.entries(view.state.filters ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) next.append(name, String(item))
  }
  return next
}

export function SavedViews({ projectId, canShare }: { projectId: string; canShare: boolean }) {
  const [params, setParams] = useSearchParams()
  const views = useSavedViews(projectId)
  const save = useSaveView(projectId)
  const setDefault = useSetDefaultView(projectId)
  const [saving, setSaving] = useState(false)
  const [name, setName] = useState('')
  const [shared, setShared] = useState(false)
  const appliedDefault = useRef(false)

  // The default view, once, when the list opens with no filters of its own.
  useEffect(() => {
    if (appliedDefault.current || views.data === undefined) return
    appliedDefault.current = true
    const preferred = views.data.find((view) => view.isDefault)
    if (preferred && Object.keys(filtersOf(params)).length === 0) setParams(paramsOf(preferred, params), { replace: true })
  }, [views.data, params, setParams])

  const current = JSON.stringify(filtersOf(params))
  const selected = views.data?.find((view) => JSON.stringify(view.state.filters ?? {}) === current)

  function submit(event: FormEvent) {
    event.preventDefault()
    save.mutate({ name, shared, state: { filters: filtersOf(params) } }, { onSuccess: () => (setSaving(false), setName(''), setShared(false)) })
  }

  return (
    <div className="saved-views">
      <label>
        View{' '}
        <select
          value={selected?.id ?? ''}
          onChange={(event) => {
            const view = views.data?.find((candidate) => candidate.id === event.target.value)
            setParams(view ? paramsOf(view, params) : paramsOf({ state: {} } as SavedView, params))
          }}
        >
          <option value="">{selected ? 'All traces' : 'Unsaved filters'}</option>
          {(views.data ?? []).map((view) => (
            <option key={view.id} value={view.id}>
              {view.name}
              {view.shared ? ' (shared)' : ''}
              {view.isDefault ? ' ★' : ''}
            </option>
          ))}
        </select>
      </label>
      {selected && (
        <button type="button" className="link-button" onClick={() => setDefault.mutate(selected.isDefault ? null : selected.id)}>
          {selected.isDefault ? 'Stop opening with this view' : 'Open with this view'}
        </button>
      )}
      <button type="button" className="link-button" aria-expanded={saving} onClick={() => setSaving(!saving)}>
        Save view…
      </button>
      {saving && (
        <form className="saved-view-form" onSubmit={submit} aria-label="Save the view">
          <input aria-label="View name" required maxLength={200} value={name} placeholder="Name" onChange={(event) => setName(event.target.value)} />
          {canShare && (
            <label className="inline">
              <input type="checkbox" checked={shared} onChange={(event) => setShared(event.target.checked)} /> Share with the project
            </label>
          )}
          <button type="submit" className="button primary" disabled={save.isPending}>
            Save
          </button>
        </form>
      )}
      {(save.isError || setDefault.isError) && <ErrorMessage error={save.error ?? setDefault.error} what="the view" />}
    </div>
  )
}
