import { Suspense } from 'react'
import { Navigate, Route, Routes, useLocation } from 'react-router'
import { useSession } from './api/session.api.ts'
import { Layout } from './components/layout.tsx'
import { Loading } from './components/status.tsx'
import { ProjectScope } from './components/project-scope.tsx'
import { pageChunks } from './pages/page-chunks.ts'
import { SignInPage } from './pages/sign-in.page.tsx'

// Each page is its own chunk: the first load fetches the shell and the page it opens on, and the
// charts (the largest dependency) only with the usage page.
const TracesPage = pageChunks.traces.Page
const TracePage = pageChunks.trace.Page
const SessionsPage = pageChunks.sessions.Page
const SessionPage = pageChunks.session.Page
const UsagePage = pageChunks.usage.Page
const PromptsPage = pageChunks.prompts.Page
const PromptsetPage = pageChunks.promptset.Page
const SettingsPage = pageChunks.settings.Page
const DatasetsPage = pageChunks.datasets.Page
const DatasetPage = pageChunks.dataset.Page
const ExperimentsComparePage = pageChunks.experimentsCompare.Page
const PlaygroundPage = pageChunks.playground.Page
const EvaluatorsPage = pageChunks.evaluators.Page
const EvaluatorNewPage = pageChunks.evaluatorNew.Page
const EvaluatorPage = pageChunks.evaluator.Page
const LlmConnectionsPage = pageChunks.llmConnections.Page
const MonitorsPage = pageChunks.monitors.Page
const MonitorPage = pageChunks.monitor.Page
const ChannelsPage = pageChunks.channels.Page
const DashboardsPage = pageChunks.dashboards.Page
const ProfilePage = pageChunks.profile.Page

export function App() {
  const session = useSession()
  const location = useLocation()
  if (session.isPending) return <Loading label="Checking your session" />
  if (session.isError) return <p role="alert" className="page-error">The server cannot be reached: {session.error.message}</p>
  if (session.data === null) {
    return (
      <Routes>
        <Route path="/sign-in" element={<SignInPage />} />
        <Route path="*" element={<Navigate to="/sign-in" replace state={{ from: location.pathname + location.search }} />} />
      </Routes>
    )
  }
  return (
    <Layout session={session.data}>
      <Suspense fallback={<Loading label="Loading the page" />}>
        <Routes>
          <Route path="/" element={<Navigate to={{ pathname: '/traces', search: location.search }} replace />} />
          {/* Just signed in: back to the page the visit started on. */}
          <Route path="/sign-in" element={<Navigate to={signedInTarget(location.state)} replace />} />
          <Route element={<ProjectScope />}>
            <Route path="/traces" element={<TracesPage />} />
            <Route path="/traces/:traceId" element={<TracePage />} />
            <Route path="/sessions" element={<SessionsPage />} />
            <Route path="/sessions/:sessionId" element={<SessionPage />} />
            <Route path="/usage" element={<UsagePage />} />
            <Route path="/prompts" element={<PromptsPage />} />
            <Route path="/prompts/:promptsetId" element={<PromptsetPage />} />
            <Route path="/datasets" element={<DatasetsPage />} />
            <Route path="/datasets/:datasetId" element={<DatasetPage />} />
            <Route path="/experiments/compare" element={<ExperimentsComparePage />} />
            <Route path="/playground" element={<PlaygroundPage />} />
            <Route path="/evaluators" element={<EvaluatorsPage />} />
            <Route path="/evaluators/new" element={<EvaluatorNewPage />} />
            <Route path="/evaluators/:evaluatorId" element={<EvaluatorPage />} />
            <Route path="/llm-connections" element={<LlmConnectionsPage />} />
            <Route path="/dashboards" element={<DashboardsPage />} />
            <Route path="/dashboards/:dashboardId" element={<DashboardsPage />} />
            <Route path="/monitors" element={<MonitorsPage />} />
            <Route path="/monitors/:monitorId" element={<MonitorPage />} />
            <Route path="/channels" element={<ChannelsPage />} />
          </Route>
          <Route path="/settings" element={<SettingsPage />} />
          <Route path="/profile" element={<ProfilePage />} />
          <Route path="*" element={<p className="page-error">There is no page at {location.pathname}.</p>} />
        </Routes>
      </Suspense>
    </Layout>
  )
}

function signedInTarget(state: unknown): string {
  const from = (state as { from?: unknown } | null)?.from
  return typeof from === 'string' && from.startsWith('/') && !from.startsWith('/sign-in') ? from : '/traces'
}
