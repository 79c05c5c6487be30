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
const AnnotationQueuesPage = pageChunks.annotationQueues.Page
const AnnotationQueuePage = pageChunks.annotationQueue.Page
const SharedTracePage = pageChunks.sharedTrace.Page
const AuditLogPage = pageChunks.auditLog.Page
const SsoPage = pageChunks.sso.Page
const MembersPage = pageChunks.members.Page
const SetupPage = pageChunks.setup.Page
const AcceptInvitationPage = pageChunks.acceptInvitation.Page
const ForgotPasswordPage = pageChunks.forgotPassword.Page
const ResetPasswordPage = pageChunks.resetPassword.Page

/** The pages a link opens (setup, invitation, password reset): the same signed in or out. */
const linkPages = /^\/(setup\/[^/]+|invitations\/[^/]+|reset-password\/[^/]+|forgot-password)$/
const ProfilePage = pageChunks.profile.Page

export function App() {
  const location = useLocation()
  // A share link's page stands alone: no session is looked up, nothing but its trace is read.
  if (location.pathname.startsWith('/shared/')) {
    return (
      <Suspense fallback={<Loading label="Loading the page" />}>
        <Routes>
          <Route path="/shared/:token" element={<SharedTracePage />} />
        </Routes>
      </Suspense>
    )
  }
  return <SignedInApp />
}

function SignedInApp() {
  const session = useSession()
  const location = useLocation()
  if (linkPages.test(location.pathname)) {
    return (
      <Suspense fallback={<Loading label="Loading the page" />}>
        <Routes>
          <Route path="/setup/:token" element={<SetupPage />} />
          <Route path="/invitations/:token" element={<AcceptInvitationPage />} />
          <Route path="/forgot-password" element={<ForgotPasswordPage />} />
          <Route path="/reset-password/:token" element={<ResetPasswordPage />} />
        </Routes>
      </Suspense>
    )
  }
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
            <Route path="/annotation-queues" element={<AnnotationQueuesPage />} />
            <Route path="/annotation-queues/:queueId" element={<AnnotationQueuePage />} />
          </Route>
          <Route path="/settings" element={<SettingsPage />} />
          <Route path="/audit-log" element={<AuditLogPage />} />
          <Route path="/sso" element={<SsoPage />} />
          <Route path="/members" element={<MembersPage />} />
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
