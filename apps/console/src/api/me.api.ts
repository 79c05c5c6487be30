import { useQuery } from '@tanstack/react-query'
import type { ProjectRole } from '@tracewell/policy'
import { apiGet } from './client.ts'

/** GET /api/me: the signed-in person, their teams and their role on each project. */
export interface Me {
  user: { id: string; email: string; name: string }
  teams: Array<{ id: string; name: string; role: string; projects: Array<{ id: string; name: string; role: ProjectRole }> }>
}

/** The signed-in person; null when the console is signed in with a team key (no person). */
export function useMe() {
  return useQuery({
    queryKey: ['me'],
    queryFn: () => apiGet<Me>('/api/me').catch(() => null),
    staleTime: 60_000,
  })
}

/** The person's role on a project, or null (a team-key session, or not loaded yet). */
export function useProjectRole(projectId: string): ProjectRole | null {
  const me = useMe()
  for (const team of me.data?.teams ?? []) {
    const project = team.projects.find((candidate) => candidate.id === projectId)
    if (project) return project.role
  }
  return null
}
