import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query'
import { apiGet, apiPath } from './client.ts'
import type { AuditLogPage } from '@tracewell/api-schemas'

// The team's audit log (docs/accounts.md#audit-log), newest first, a page of 50 at a time.

/** The filters as the page keeps them (the query's own names are snake_case). */
export interface AuditLogFilters {
  actor?: string | undefined
  action?: string | undefined
  resourceType?: string | undefined
  from?: string | undefined
}

export function useAuditLog(teamId: string, filters: AuditLogFilters) {
  return useInfiniteQuery({
    queryKey: ['audit-log', teamId, filters],
    queryFn: ({ pageParam }) =>
      apiGet<AuditLogPage>(
        apiPath(`/api/teams/${encodeURIComponent(teamId)}/audit-log`, {
          actor: filters.actor,
          action: filters.action,
          resource_type: filters.resourceType,
          from: filters.from,
          limit: 50,
          cursor: pageParam,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  })
}
