import { Can, useCan } from '../components/can.tsx'
import '../alerting.css'
import { useMemo, useRef, useState } from 'react'
import { useNavigate, useParams } from 'react-router'
import {
  exportDashboard,
  useCreateDashboard,
  useDashboard,
  useDashboardData,
  useDashboards,
  useDeleteDashboard,
  useImportDashboard,
  useSaveDashboard,
  type Dashboard,
  type Widget,
  type WidgetLayout,
} from '../api/dashboards.api.ts'
import { DashboardGrid, layoutOf } from '../components/dashboard-grid.tsx'
import type { ChartPoint } from '../components/metric-chart.tsx'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { WidgetEditor } from '../components/widget-editor.tsx'
import { traceListSearch } from '../lib/metrics.ts'

const windows = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const
type Window = keyof typeof windows
const windowLabels: Record<Window, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' }

/** The project's dashboards: the one opened (the default one first), its widgets, and the others to pick. */
export default function DashboardsPage() {
  const { projectId } = useProject()
  const { dashboardId } = useParams()
  const dashboards = useDashboards(projectId)
  const chosenId = dashboardId ?? (dashboards.data?.find((dashboard) => dashboard.isDefault) ?? dashboards.data?.[0])?.id
  const dashboard = useDashboard(projectId, chosenId)
  return (
    <section className="page" aria-labelledby="dashboards-title">
      <DashboardsHeader projectId={projectId} dashboards={dashboards.data ?? []} chosenId={chosenId} />
      {dashboards.isPending && <Loading label="Loading the dashboards" />}
      {dashboards.isError && <ErrorMessage error={dashboards.error} what="the dashboards" />}
      {dashboards.data?.length === 0 && <Empty>No dashboard yet: make one above.</Empty>}
      {dashboard.isError && <ErrorMessage error={dashboard.error} what="the dashboard" />}
      {dashboard.data && <DashboardView key={dashboard.data.id} projectId={projectId} dashboard={dashboard.data} />}
    </section>
  )
}

function DashboardsHeader({ projectId, dashboards, chosenId }: { projectId: string; dashboards: Dashboard[]; chosenId: string | undefined }) {
  const navigate = useNavigate()
  const create = useCreateDashboard(projectId)
  const importing = useImportDashboard(projectId)
  const file = useRef<HTMLInputElement>(null)
  const [importProblem, setImportProblem] = useState<string | null>(null)
  const open = (id: string) => navigate(projectPath(`/dashboards/${encodeURIComponent(id)}`, projectId))

  async function importFile(chosen: File | undefined) {
    if (!chosen) return
    setImportProblem(null)
    let document: unknown
    try {
      document = JSON.parse(await chosen.text())
    } catch {
      setImportProblem(`${chosen.name} is not JSON`)
      return
    }
    importing.mutate(document, { onSuccess: (made) => open(made.id) })
    if (file.current) file.current.value = ''
  }

  return (
    <>
      <div className="page-header">
        <h1 id="dashboards-title">Dashboards</h1>
        {dashboards.length > 0 && (
          <label className="inline-label">
            <span>Dashboard</span>
            <select value={chosenId ?? ''} onChange={(event) => open(event.target.value)}>
              {dashboards.map((dashboard) => (
                <option key={dashboard.id} value={dashboard.id}>
                  {dashboard.name}
                  {dashboard.isDefault ? ' (default)' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <span className="topbar-spacer" />
        <Can permission="dashboards:write">
          <button
            type="button"
            className="button"
            disabled={create.isPending}
            onClick={() => {
              const name = window.prompt('Name of the new dashboard')?.trim()
              if (name) create.mutate({ name, widgets: [] }, { onSuccess: (made) => open(made.id) })
            }}
          >
            New dashboard
          </button>
        </Can>
        <Can permission="dashboards:write">
          <label className="button file-button">
            Import JSON
            <input ref={file} type="file" accept="application/json,.json" className="visually-hidden" onChange={(event) => void importFile(event.target.files?.[0])} />
          </label>
        </Can>
      </div>
      {create.isError && <ErrorMessage error={create.error} what="the dashboard" action="create" />}
      {importProblem && (
        <p className="error-message" role="alert">
          Could not import: {importProblem}
        </p>
      )}
      {importing.isError && <ErrorMessage error={importing.error} what="the dashboard" action="import" />}
    </>
  )
}

/** The first free row under the widgets: where a new one goes. */
function bottomOf(widgets: Widget[]): number {
  return widgets.reduce((bottom, widget, index) => Math.max(bottom, layoutOf(widget, index).y + layoutOf(widget, index).h), 0)
}

/** One dashboard: its window, its widgets in their grid, and the editor of the widget being added or changed. */
function DashboardView({ projectId, dashboard }: { projectId: string; dashboard: Dashboard }) {
  const navigate = useNavigate()
  const [range, setRange] = useState<Window>('24h')
  const [editing, setEditing] = useState<Widget | null>(null)
  // Minute precision, so the query key (and the answer) stays put between renders.
  const { from, to } = useMemo(() => {
    const now = Math.ceil(Date.now() / 60_000) * 60_000
    return { from: new Date(now - windows[range]).toISOString(), to: new Date(now).toISOString() }
  }, [range])
  const save = useSaveDashboard(projectId, dashboard.id)
  const remove = useDeleteDashboard(projectId)
  const data = useDashboardData(projectId, dashboard.id, from, to, dashboard.updatedAt)
  const widgets = dashboard.widgets
  const mayWrite = useCan('dashboards:write', projectId)

  const saveWidgets = (next: Widget[]) => save.mutate({ name: dashboard.name, widgets: next })

  function saveLayout(layouts: ReadonlyMap<string, WidgetLayout>) {
    const changed = widgets.some((widget, index) => {
      const next = layouts.get(widget.id)
      const now = layoutOf(widget, index)
      return next && (next.x !== now.x || next.y !== now.y || next.w !== now.w || next.h !== now.h)
    })
    if (changed) saveWidgets(widgets.map((widget, index) => ({ ...widget, layout: layouts.get(widget.id) ?? layoutOf(widget, index) })))
  }

  function saveWidget(widget: Widget) {
    const known = widgets.some((existing) => existing.id === widget.id)
    saveWidgets(known ? widgets.map((existing) => (existing.id === widget.id ? widget : existing)) : [...widgets, widget])
    setEditing(null)
  }

  function openTraces(widget: Widget, point: ChartPoint) {
    const step = data.data?.get(widget.id)?.granularity ?? widget.granularity ?? 3_600
    navigate(`/traces?${traceListSearch(projectId, { t: point.t, granularitySeconds: step }, widget.filter, widget.groupBy, point.group)}`)
  }

  async function download() {
    const document = await exportDashboard(projectId, dashboard.id)
    const link = window.document.createElement('a')
    link.href = URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: 'application/json' }))
    link.download = `${dashboard.name.replace(/[^\w-]+/g, '-').toLowerCase() || 'dashboard'}.dashboard.json`
    link.click()
    URL.revokeObjectURL(link.href)
  }

  return (
    <>
      <div className="toolbar">
        <h2 className="dashboard-name">{dashboard.name}</h2>
        {dashboard.isDefault && <span className="badge neutral">default</span>}
        <label className="inline-label">
          <span>Time</span>
          <select value={range} onChange={(event) => setRange(event.target.value as Window)}>
            {Object.entries(windowLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <span className="topbar-spacer" />
        <span className="muted small" role="status" aria-live="polite">
          {save.isPending ? 'Saving…' : save.isSuccess ? 'Saved' : ''}
        </span>
        <Can permission="dashboards:write">
          <button
            type="button"
            className="button primary"
            onClick={() => setEditing({ id: crypto.randomUUID(), title: '', metric: 'traces', chart: 'line', layout: { x: 0, y: bottomOf(widgets), w: 6, h: 4 } })}
          >
            Add widget
          </button>
        </Can>
        <button type="button" className="button" onClick={() => void download()}>
          Export JSON
        </button>
        {!dashboard.isDefault && mayWrite && (
          <button
            type="button"
            className="button danger"
            disabled={remove.isPending}
            onClick={() => {
              if (window.confirm(`Delete the dashboard ${dashboard.name}?`)) remove.mutate(dashboard.id, { onSuccess: () => navigate(projectPath('/dashboards', projectId)) })
            }}
          >
            Delete
          </button>
        )}
      </div>
      {save.isError && <ErrorMessage error={save.error} what="the dashboard" action="save" />}
      {data.isError && <ErrorMessage error={data.error} what="the widgets' figures" />}
      {editing && <WidgetEditor key={editing.id} widget={editing} onSave={saveWidget} onCancel={() => setEditing(null)} />}
      {widgets.length === 0 ? (
        <Empty>This dashboard has no widget yet: Add widget picks a metric, its grouping, the traces it counts and a chart.</Empty>
      ) : (
        <DashboardGrid
          widgets={widgets}
          data={data.data}
          loading={data.isPending}
          onLayout={saveLayout}
          onEdit={setEditing}
          onRemove={(widget) => saveWidgets(widgets.filter((existing) => existing.id !== widget.id))}
          onPoint={openTraces}
          editable={mayWrite}
        />
      )}
    </>
  )
}
