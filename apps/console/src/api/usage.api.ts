import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { apiGet, apiPath } from './client.ts'
import type { Usage } from './types.ts'

export interface UsageQuery {
  from: string
  to?: string | undefined
  bucket: 'hour' | 'day'
  groupBy?: 'model' | 'vendor' | 'service' | 'user' | undefined
  /** Also the calls Tracewell made itself (playground, experiments, judges). */
  includeTracewellCalls?: boolean
}

export function useUsage(projectId: string, query: UsageQuery) {
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone
  return useQuery({
    queryKey: ['usage', projectId, query, tz],
    queryFn: () =>
      apiGet<Usage>(apiPath('/api/usage', { project_id: projectId, from: query.from, to: query.to, bucket: query.bucket, tz, group_by: query.groupBy, include_tracewell_calls: query.includeTracewellCalls ? 'true' : undefined })),
    placeholderData: keepPreviousData,
  })
}
