import { useState, type FormEvent } from 'react'
import type { ChartKind, Widget } from '../api/dashboards.api.ts'
import { dashboardMetrics, groupLabels, metricFilterOf, metricGroups, metricLabels, traceFiltersOf, type Metric, type MetricGroup } from '../lib/metrics.ts'
import { TraceFilterForm } from './trace-filter-form.tsx'

const chartLabels: Record<ChartKind, string> = { line: 'Line', bar: 'Bars', table: 'Table', number: 'Number' }

/** The point widths offered; "automatic" lets the API pick one that gives at most 200 points. */
const granularities = [
  { seconds: 0, label: 'Automatic' },
  { seconds: 60, label: '1 minute' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
] as const

/**
 * One widget's definition: title, metric (and score), grouping, the traces it counts, chart and
 * size. Saving hands the widget back; the dashboard saves itself with it.
 */
export function WidgetEditor({ widget, onSave, onCancel }: { widget: Widget; onSave: (widget: Widget) => void; onCancel: () => void }) {
  const [draft, setDraft] = useState<Widget>(widget)
  const [filters, setFilters] = useState(() => traceFiltersOf(widget.filter))
  const set = <K extends keyof Widget>(key: K, value: Widget[K]) => setDraft((current) => ({ ...current, [key]: value }))
  const layout = draft.layout ?? { x: 0, y: 0, w: 6, h: 4 }

  function submit(event: FormEvent) {
    event.preventDefault()
    const filter = metricFilterOf(filters)
    const scoreName = draft.metric === 'score_avg' ? draft.scoreName?.trim() : undefined
    const { scoreName: _score, filter: _filter, groupBy, ...rest } = draft
    onSave({
      ...rest,
      title: draft.title.trim() || metricLabels[draft.metric],
      ...(scoreName ? { scoreName } : {}),
      ...(groupBy && (groupBy !== 'score_name' || draft.metric === 'score_avg') ? { groupBy } : {}),
      ...(Object.keys(filter).length > 0 ? { filter } : {}),
    })
  }

  return (
    <section className="card widget-editor" aria-labelledby="widget-editor-title">
      <h2 id="widget-editor-title">{widget.title ? `Edit “${widget.title}”` : 'New widget'}</h2>
      <form id="widget-form" className="form" onSubmit={submit}>
        <div className="inline-fields">
          <label className="grow">
            <span>Title</span>
            <input value={draft.title} placeholder={metricLabels[draft.metric]} onChange={(event) => set('title', event.target.value)} />
          </label>
          <label>
            <span>Metric</span>
            <select value={draft.metric} onChange={(event) => set('metric', event.target.value as Metric)}>
              {dashboardMetrics.map((metric) => (
                <option key={metric} value={metric}>
                  {metricLabels[metric]}
                </option>
              ))}
            </select>
          </label>
          {draft.metric === 'score_avg' && (
            <label>
              <span>Score name</span>
              <input value={draft.scoreName ?? ''} placeholder={draft.groupBy === 'score_name' ? 'every score' : 'helpfulness'} onChange={(event) => set('scoreName', event.target.value)} />
            </label>
          )}
          <label>
            <span>Group by</span>
            <select value={draft.groupBy ?? ''} onChange={(event) => set('groupBy', event.target.value === '' ? undefined : (event.target.value as MetricGroup))}>
              <option value="">Nothing</option>
              {metricGroups.map((group) => (
                <option key={group} value={group} disabled={group === 'score_name' && draft.metric !== 'score_avg'}>
                  {groupLabels[group]}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Chart</span>
            <select value={draft.chart} onChange={(event) => set('chart', event.target.value as ChartKind)}>
              {Object.entries(chartLabels).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Points every</span>
            <select value={draft.granularity ?? 0} onChange={(event) => set('granularity', Number(event.target.value) || undefined)}>
              {granularities.map((option) => (
                <option key={option.seconds} value={option.seconds}>
                  {option.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Width (of 12)</span>
            <input type="number" min={2} max={12} value={layout.w} onChange={(event) => set('layout', { ...layout, w: Math.min(12, Math.max(2, Number(event.target.value) || 2)) })} />
          </label>
          <label>
            <span>Height (rows)</span>
            <input type="number" min={2} max={12} value={layout.h} onChange={(event) => set('layout', { ...layout, h: Math.min(12, Math.max(2, Number(event.target.value) || 2)) })} />
          </label>
        </div>
      </form>
      <h3 className="subheading">Which traces</h3>
      <TraceFilterForm filters={filters} onApply={setFilters} scope label="Which traces the widget counts" />
      <div className="form-actions">
        <button type="submit" form="widget-form" className="button primary">
          {widget.title ? 'Save widget' : 'Add widget'}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </section>
  )
}
