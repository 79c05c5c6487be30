import { createContext, useContext, useEffect } from 'react'
import { Link, Outlet, useSearchParams } from 'react-router'
import { useProjects } from '../api/projects.api.ts'
import type { Project } from '../api/types.ts'
import { Empty, ErrorMessage, Loading } from './status.tsx'

interface ProjectContextValue {
  projectId: string
  project: Project
  projects: Project[]
}

const ProjectContext = createContext<ProjectContextValue | null>(null)

const rememberedKey = 'tracewell.project'

/** The project every page below is about: the URL's project_id, else the last one used, else the first. */
export function useProject(): ProjectContextValue {
  const value = useContext(ProjectContext)
  if (value === null) throw new Error('useProject outside <ProjectScope>')
  return value
}

/** The project of the page when it is inside <ProjectScope>; null on team pages (settings, profile). */
export function useOptionalProject(): ProjectContextValue | null {
  return useContext(ProjectContext)
}

/** A console path with the current project in its query, so links keep the project. */
export function projectPath(path: string, projectId: string, query: Record<string, string> = {}): string {
  const params = new URLSearchParams({ project_id: projectId, ...query })
  return `${path}?${params.toString()}`
}

export function rememberProject(projectId: string): void {
  try {
    localStorage.setItem(rememberedKey, projectId)
  } catch {
    // Storage may be off (private mode); the URL still carries the project.
  }
}

/** The project last chosen in this browser, if any. */
export function rememberedProject(): string | null {
  try {
    return localStorage.getItem(rememberedKey)
  } catch {
    return null
  }
}

/**
 * A layout route for pages about one project. It puts project_id in the URL when missing (so the
 * URL alone reproduces the view) and keeps the last choice for the next visit.
 */
export function ProjectScope() {
  const projects = useProjects()
  const [params, setParams] = useSearchParams()
  const requested = params.get('project_id')
  const list = projects.data
  const chosen = list === undefined ? undefined : (list.find((project) => project.id === requested) ?? (requested === null ? (list.find((project) => project.id === rememberedProject()) ?? list[0]) : undefined))

  useEffect(() => {
    if (chosen === undefined) return
    rememberProject(chosen.id)
    if (requested !== chosen.id) {
      const next = new URLSearchParams(params)
      next.set('project_id', chosen.id)
      setParams(next, { replace: true })
    }
  }, [chosen, requested, params, setParams])

  if (projects.isPending) return <Loading label="Loading projects" />
  if (projects.isError) return <ErrorMessage error={projects.error} what="the projects" />
  if (list === undefined || list.length === 0) {
    return (
      <Empty>
        <p>This team has no project yet.</p>
        <p>
          <Link to="/settings">Create one in Settings</Link>, then send traces with its project key.
        </p>
      </Empty>
    )
  }
  if (chosen === undefined) {
    return (
      <Empty>
        <p role="alert">There is no project {requested} in this team.</p>
        <p>
          <Link to={projectPath(window.location.pathname, list[0]!.id)}>Open {list[0]!.name} instead</Link>
        </p>
      </Empty>
    )
  }
  return (
    <ProjectContext.Provider value={{ projectId: chosen.id, project: chosen, projects: list }}>
      <Outlet />
    </ProjectContext.Provider>
  )
}
