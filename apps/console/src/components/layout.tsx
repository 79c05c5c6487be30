import type { Permission } from '@tracewell/policy'
import { type ReactNode } from 'react'
import { NavLink, useLocation, useNavigate, useSearchParams } from 'react-router'
import { useProjects } from '../api/projects.api.ts'
import { useSignOut, useSwitchTeam } from '../api/session.api.ts'
import type { Session } from '../api/types.ts'
import { rememberedProject, rememberProject } from './project-scope.tsx'
import { ThemeToggle } from './theme.tsx'
import { sessionAllows } from './can.tsx'

// Each section with what opening it needs: a section whose page would only be refused is not offered.
const sections: readonly { path: string; label: string; needs: Permission }[] = [
  { path: '/traces', label: 'Traces', needs: 'traces:read' },
  { path: '/sessions', label: 'Sessions', needs: 'traces:read' },
  { path: '/annotation-queues', label: 'Review', needs: 'annotation-queues:read' },
  { path: '/usage', label: 'Usage', needs: 'traces:read' },
  { path: '/dashboards', label: 'Dashboards', needs: 'dashboards:read' },
  { path: '/monitors', label: 'Monitors', needs: 'monitors:read' },
  { path: '/channels', label: 'Channels', needs: 'notification-channels:read' },
  { path: '/prompts', label: 'Prompts', needs: 'prompts:read' },
  { path: '/datasets', label: 'Datasets', needs: 'datasets:read' },
  { path: '/playground', label: 'Playground', needs: 'playground:run' },
  { path: '/evaluators', label: 'Evaluators', needs: 'evaluators:read' },
  { path: '/llm-connections', label: 'LLM connections', needs: 'llm-connections:read' },
  { path: '/settings', label: 'Settings', needs: 'projects:read' },
  { path: '/members', label: 'Members', needs: 'members:read' },
  { path: '/audit-log', label: 'Audit log', needs: 'audit-log:read' },
  { path: '/sso', label: 'Single sign-on', needs: 'sso:read' },
]

/** The frame of every signed-in page: the sections, the project picker, the team and sign-out. */
export function Layout({ session, children }: { session: Session; children: ReactNode }) {
  const [params] = useSearchParams()
  const projectId = params.get('project_id')
  const search = projectId ? `?project_id=${encodeURIComponent(projectId)}` : ''
  const signOut = useSignOut()
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to the content
      </a>
      <header className="topbar">
        <span className="brand" aria-label="Tracewell">
          <svg viewBox="0 0 32 32" width="22" height="22" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="var(--accent)" />
            <path d="M7 9h18M7 16h12M7 23h7" stroke="#fff" strokeWidth="3" strokeLinecap="round" />
          </svg>
          Tracewell
        </span>
        <ProjectPicker current={projectId} />
        <span className="topbar-spacer" />
        <ThemeToggle />
        <TeamSwitcher session={session} />
        {session.user && (
          <NavLink to="/profile" className="profile-link" title={session.user.email}>
            {session.user.name}
          </NavLink>
        )}
        <button type="button" className="button" onClick={() => signOut.mutate(session)} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <nav className="sidebar" aria-label="Sections">
        <ul>
          {sections
            .filter((section) => sessionAllows(session, section.needs, projectId ?? undefined))
            .map((section) => (
              <li key={section.path}>
                <NavLink to={section.path + search}>{section.label}</NavLink>
              </li>
            ))}
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  )
}

/** The team the console works in: a choice when the person belongs to several (sent as x-tracewell-team). */
function TeamSwitcher({ session }: { session: Session }) {
  const switchTeam = useSwitchTeam()
  const navigate = useNavigate()
  if (session.teams.length < 2) {
    return (
      <span className="team" title={`Team ${session.teamId}, ${session.role}`}>
        {session.teamName}
      </span>
    )
  }
  return (
    <label className="team-switcher">
      <span className="visually-hidden">Team</span>
      <select
        aria-label="Team"
        value={session.teamId}
        onChange={(event) => {
          switchTeam(session, event.target.value)
          // Another team's projects: start from its first, not a project of the team left.
          navigate('/traces')
        }}
      >
        {session.teams.map((team) => (
          <option key={team.id} value={team.id}>
            {team.name} ({team.role})
          </option>
        ))}
      </select>
    </label>
  )
}

function ProjectPicker({ current }: { current: string | null }) {
  const projects = useProjects()
  const location = useLocation()
  const navigate = useNavigate()
  if (!projects.data || projects.data.length === 0) return null
  const section = `/${location.pathname.split('/')[1] ?? 'traces'}`
  // A team page (profile, settings) carries no project: it shows the one its project pages would open.
  const shown = current ?? (projects.data.find((project) => project.id === rememberedProject()) ?? projects.data[0])?.id
  return (
    <label className="project-picker">
      <span>Project</span>
      <select
        value={shown}
        onChange={(event) => {
          rememberProject(event.target.value)
          // A project's list, not the trace or prompt of another project the page showed.
          navigate(`${section}?project_id=${encodeURIComponent(event.target.value)}`)
        }}
      >
        {projects.data.map((project) => (
          <option key={project.id} value={project.id}>
            {project.name}
          </option>
        ))}
      </select>
    </label>
  )
}
