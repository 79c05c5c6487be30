import type { QueryClient } from '@tanstack/react-query'
import { readTraceFilters } from '../lib/trace-filters.ts'
import { projectsQuery } from './projects.api.ts'
import { sessionQuery } from './session.api.ts'
import { traceListOptions, traceOptions } from './traces.api.ts'

/**
 * What the page the browser opens on will ask for, asked for at once and side by side, instead of
 * one request after another as each component mounts: the session, the team's projects, and the
 * trace or trace list of the URL. A wrong guess costs one request; the components use the answers.
 */
export function prefetchFirstPage(client: QueryClient, location: Location): void {
  // A share link's page reads its one trace and nothing else (no session, no projects).
  if (location.pathname.startsWith('/shared/')) return
  void client.prefetchQuery(sessionQuery)
  void client.prefetchQuery(projectsQuery)
  const params = new URLSearchParams(location.search)
  const projectId = params.get('project_id')
  if (projectId === null) return
  const [, section, traceId] = location.pathname.split('/')
  if (section !== 'traces') return
  if (traceId) void client.prefetchQuery(traceOptions(projectId, traceId))
  else void client.prefetchInfiniteQuery(traceListOptions(projectId, readTraceFilters(params)))
}
