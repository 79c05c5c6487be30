import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import type { Metric, MetricFilter, MetricGroup } from '../lib/metrics.ts'
import { apiGet, apiPath, apiRequest } from './client.ts'

// A project's dashboards: widgets of metrics over time (docs/api.md#dashboards).

export type ChartKind = 'line' | 'bar' | 'table' | 'number'

export interface WidgetLayout {
  x: number
  y: number
  w: number
  h: number
}

/** A widget as the API keeps it (WidgetSchema): a field left out is the default, never null. */
export interface Widget {
  id: string
  title: string
  metric: Metric
  scoreName?: string
  groupBy?: MetricGroup
  filter?: MetricFilter
  chart: ChartKind
  /** Seconds a point covers; left out, the API picks the widest giving at most 200 points. */
  granularity?: number
  layout?: WidgetLayout
}

export interface Dashboard {
  id: string
  projectId: string
  name: string
  isDefault: boolean
  widgets: Widget[]
  createdAt: string
  updatedAt: string
}

export interface SeriesPoint {
  t: string
  value: number | null
}

export interface WidgetSeries {
  id: string
  /** Seconds each point covers, from its t. */
  granularity: number
  series: Array<{ group: string | null; points: SeriesPoint[] }>
}

export type DashboardDraft = Pick<Dashboard, 'name' | 'widgets'>

const dashboardPath = (dashboardId: string, rest = '') => `/api/dashboards/${encodeURIComponent(dashboardId)}${rest}`

export function useDashboards(projectId: string) {
  return useQuery({
    queryKey: ['dashboards', projectId],
    queryFn: () => apiGet<{ dashboards: Dashboard[] }>(apiPath('/api/dashboards', { project_id: projectId })),
    select: (answer) => answer.dashboards,
  })
}

export function useDashboard(projectId: string, dashboardId: string | undefined) {
  return useQuery({
    queryKey: ['dashboard', projectId, dashboardId],
    queryFn: () => apiGet<Dashboard>(apiPath(dashboardPath(dashboardId ?? ''), { project_id: projectId })),
    enabled: dashboardId !== undefined,
  })
}

/** Each widget's series over [from, to); read again every minute, the last answer kept on screen meanwhile. */
export function useDashboardData(projectId: string, dashboardId: string, from: string, to: string, version: string) {
  return useQuery({
    queryKey: ['dashboard-data', projectId, dashboardId, from, to, version],
    queryFn: () => apiGet<{ from: string; to: string; widgets: WidgetSeries[] }>(apiPath(dashboardPath(dashboardId, '/data'), { project_id: projectId, from, to })),
    select: (answer) => new Map(answer.widgets.map((widget) => [widget.id, widget])),
    placeholderData: keepPreviousData,
    refetchInterval: 60_000,
  })
}

export function useCreateDashboard(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: DashboardDraft) => apiRequest<Dashboard>('POST', apiPath('/api/dashboards', { project_id: projectId }), body),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['dashboards', projectId] }),
  })
}

/** Saves the whole dashboard (name and widgets with their layout), as the API's PUT takes it. */
export function useSaveDashboard(projectId: string, dashboardId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: DashboardDraft) => apiRequest<Dashboard>('PUT', apiPath(dashboardPath(dashboardId), { project_id: projectId }), body),
    onSuccess: (saved) => {
      client.setQueryData(['dashboard', projectId, dashboardId], saved)
      void client.invalidateQueries({ queryKey: ['dashboards', projectId] })
    },
  })
}

export function useDeleteDashboard(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (dashboardId: string) => apiRequest<void>('DELETE', apiPath(dashboardPath(dashboardId), { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['dashboards', projectId] }),
  })
}

/** The dashboard as the JSON file a person downloads and imports elsewhere. */
export function exportDashboard(projectId: string, dashboardId: string): Promise<unknown> {
  return apiGet<unknown>(apiPath(dashboardPath(dashboardId, '/export'), { project_id: projectId }))
}

export function useImportDashboard(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (document: unknown) => apiRequest<Dashboard>('POST', apiPath('/api/dashboards/import', { project_id: projectId }), document),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['dashboards', projectId] }),
  })
}
