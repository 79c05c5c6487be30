import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import type { MetricFilter, MonitorMetric } from '../lib/metrics.ts'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { WidgetSeries } from './dashboards.api.ts'

// A project's monitors: a metric over a window against a threshold, their state and its history
// (docs/api.md#monitors).

export type MonitorOperator = '>' | '>=' | '<' | '<='
export type MonitorState = 'ok' | 'alerting' | 'no_data'
/** A rolling window of windowSeconds, or the calendar month so far (a cost budget). */
export type MonitorWindow = 'rolling' | 'calendar_month'

export interface MonitorSettings {
  name: string
  metric: MonitorMetric
  scoreName: string | null
  filter: MetricFilter
  window: MonitorWindow
  windowSeconds: number | null
  operator: MonitorOperator
  threshold: number
  evaluateEverySeconds: number
  channelIds: string[]
  renotifyAfterSeconds: number | null
  mutedUntil: string | null
  /** A budget's steps, in percent of the threshold, each notified once a month. */
  budgetPercents: number[] | null
}

export interface Monitor extends MonitorSettings {
  id: string
  projectId: string
  state: MonitorState
  stateValue: number | null
  stateChangedAt: string | null
  lastValue: number | null
  lastEvaluatedAt: string | null
  nextEvaluationAt: string
  createdAt: string
  updatedAt: string
}

export interface MonitorEvent {
  id: string
  monitorId: string
  kind: 'alerting' | 'resolved' | 'no_data' | 'renotify' | 'budget'
  state: MonitorState
  value: number | null
  threshold: number
  window: { from: string; to: string }
  channelIds: string[]
  createdAt: string
}

const monitorPath = (monitorId: string, rest = '') => `/api/monitors/${encodeURIComponent(monitorId)}${rest}`

/**
 * The settings as the API's body takes them: a rolling window as windowSeconds or the calendar
 * month as window, and the optional fields left out rather than null.
 */
export function monitorBody(settings: MonitorSettings): Record<string, unknown> {
  const { window, windowSeconds, scoreName, budgetPercents, filter, ...rest } = settings
  return {
    ...rest,
    ...(window === 'calendar_month' ? { window } : { windowSeconds }),
    ...(scoreName ? { scoreName } : {}),
    ...(window === 'calendar_month' && budgetPercents ? { budgetPercents } : {}),
    ...(Object.keys(filter).length > 0 ? { filter } : {}),
  }
}

/** The list, read again every 10 s: a monitor's state changes as it is evaluated (every 10 s at the most). */
export function useMonitors(projectId: string) {
  return useQuery({
    queryKey: ['monitors', projectId],
    queryFn: () => apiGet<{ monitors: Monitor[] }>(apiPath('/api/monitors', { project_id: projectId })),
    select: (answer) => answer.monitors,
    refetchInterval: 10_000,
  })
}

export function useMonitor(projectId: string, monitorId: string | undefined) {
  return useQuery({
    queryKey: ['monitor', projectId, monitorId],
    queryFn: () => apiGet<Monitor>(apiPath(monitorPath(monitorId ?? ''), { project_id: projectId })),
    enabled: monitorId !== undefined,
    refetchInterval: 10_000,
  })
}

export function useMonitorHistory(projectId: string, monitorId: string) {
  return useQuery({
    queryKey: ['monitor-history', projectId, monitorId],
    queryFn: () => apiGet<{ events: MonitorEvent[] }>(apiPath(monitorPath(monitorId, '/history'), { project_id: projectId })),
    select: (answer) => answer.events,
    refetchInterval: 10_000,
  })
}

export function useCreateMonitor(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: MonitorSettings) => apiRequest<Monitor>('POST', apiPath('/api/monitors', { project_id: projectId }), monitorBody(body)),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['monitors', projectId] }),
  })
}

export function useUpdateMonitor(projectId: string, monitorId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: MonitorSettings) => apiRequest<Monitor>('PUT', apiPath(monitorPath(monitorId), { project_id: projectId }), monitorBody(body)),
    onSuccess: (saved) => {
      client.setQueryData(['monitor', projectId, monitorId], saved)
      void client.invalidateQueries({ queryKey: ['monitors', projectId] })
    },
  })
}

export function useDeleteMonitor(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (monitorId: string) => apiRequest<void>('DELETE', apiPath(monitorPath(monitorId), { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['monitors', projectId] }),
  })
}

/** What the preview is asked: the monitor's form as it stands (POST /api/monitors/preview). */
export type MetricPreviewQuery = Pick<MonitorSettings, 'metric' | 'scoreName' | 'filter' | 'window' | 'windowSeconds' | 'operator' | 'threshold'>

export interface MetricPreview {
  granularitySeconds: number
  /** `breaches`: whether the value is past the threshold (null without one). */
  points: Array<{ t: string; value: number | null; breaches: boolean | null }>
}

/**
 * The metric as the monitor would read it over the last day, in points as wide as its window (a
 * budget: the month to date as running totals), as one series for the chart.
 */
export function useMetricPreview(projectId: string, query: MetricPreviewQuery | null) {
  return useQuery({
    queryKey: ['metric-preview', projectId, query],
    queryFn: () => {
      const { scoreName, filter, window, windowSeconds, threshold, ...rest } = query as MetricPreviewQuery
      const body = {
        ...rest,
        ...(window === 'calendar_month' ? { window } : windowSeconds ? { windowSeconds } : {}),
        ...(Number.isFinite(threshold) ? { threshold } : {}),
        ...(scoreName ? { scoreName } : {}),
        ...(Object.keys(filter).length > 0 ? { filter } : {}),
      }
      return apiRequest<MetricPreview>('POST', apiPath('/api/monitors/preview', { project_id: projectId }), body)
    },
    select: (preview): WidgetSeries => ({ id: 'preview', granularity: preview.granularitySeconds, series: [{ group: null, points: preview.points.map(({ t, value }) => ({ t, value })) }] }),
    enabled: query !== null,
    placeholderData: keepPreviousData,
    // New traces move the line while the form is open.
    refetchInterval: 10_000,
  })
}
