import { infiniteQueryOptions, keepPreviousData, queryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query'
import { traceListQuery, type TraceFilters } from '../lib/trace-filters.ts'
import { apiGet, apiPath } from './client.ts'
import type { SummariesStatus, Trace, TracePage } from './types.ts'

export const tracePageSize = 100

/** The trace list, a page (cursor) at a time; in live mode the newest page is polled. */
export function traceListOptions(projectId: string, filters: TraceFilters) {
  const { live, ...rest } = filters
  return infiniteQueryOptions({
    queryKey: ['traces', projectId, rest],
    queryFn: ({ pageParam }) =>
      apiGet<TracePage>(apiPath('/api/traces', { project_id: projectId, ...traceListQuery(filters, Date.now()), limit: tracePageSize, cursor: pageParam })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
    // Live mode re-reads the first page every few seconds; a refetch re-reads every loaded page, so
    // live mode keeps to the newest one (maxPages).
    refetchInterval: live ? 3_000 : false,
    maxPages: live ? 1 : undefined,
  })
}

export function useTraceList(projectId: string, filters: TraceFilters) {
  return useInfiniteQuery(traceListOptions(projectId, filters))
}

export function traceOptions(projectId: string, traceId: string) {
  return queryOptions({
    queryKey: ['trace', projectId, traceId],
    queryFn: () => apiGet<Trace>(apiPath(`/api/traces/${encodeURIComponent(traceId)}`, { project_id: projectId })),
    staleTime: 30_000,
    // A stored trace does not change, and comparing thousands of spans with the previous answer
    // (to keep unchanged objects) would cost more than it saves.
    structuralSharing: false,
  })
}

export function useTrace(projectId: string, traceId: string) {
  return useQuery(traceOptions(projectId, traceId))
}

/** How far the trace list, sessions and usage are behind the stored spans, polled while a page shows. */
export function useSummariesStatus(projectId: string) {
  return useQuery({
    queryKey: ['summaries-status', projectId],
    queryFn: () => apiGet<SummariesStatus>(apiPath('/api/summaries/status', { project_id: projectId })),
    refetchInterval: 5_000,
  })
}
