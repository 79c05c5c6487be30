import { lazy, type ComponentType } from 'react'

// The pages, each a chunk of its own, loaded on first use. The chunk of the page the browser opens
// on is loaded before the first render (main.tsx), beside the session check.

type PageModule = { default: ComponentType }

/**
 * A page as a lazy component that does not suspend once its chunk is loaded. React suspends on a
 * lazy component whose loader returns a pending promise, and `import()` always returns one, even
 * for a module it already has; once a Suspense fallback is on screen, React holds the content back
 * for up to 300 ms to avoid flicker (its fallback throttle). So a loaded chunk is handed over as a
 * thenable that resolves synchronously, which React reads without suspending.
 */
function pageChunk(load: () => Promise<PageModule>) {
  let loaded: PageModule | undefined
  const loadOnce = () => (loaded ? Promise.resolve(loaded) : load().then((module) => (loaded = module)))
  const Page = lazy(() => (loaded ? (settledWith(loaded) as Promise<PageModule>) : loadOnce()))
  return { Page, load: loadOnce }
}

function settledWith<T>(value: T): PromiseLike<T> {
  return {
    then<R1 = T, R2 = never>(onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null): PromiseLike<R1 | R2> {
      return settledWith(onFulfilled ? (onFulfilled(value) as R1) : (value as unknown as R1))
    },
  }
}

export const pageChunks = {
  traces: pageChunk(() => import('./traces.page.tsx')),
  annotationQueues: pageChunk(() => import('./annotation-queues.page.tsx')),
  annotationQueue: pageChunk(() => import('./annotation-queue.page.tsx')),
  sharedTrace: pageChunk(() => import('./shared-trace.page.tsx')),
  trace: pageChunk(() => import('./trace.page.tsx')),
  sessions: pageChunk(() => import('./sessions.page.tsx')),
  session: pageChunk(() => import('./session.page.tsx')),
  usage: pageChunk(() => import('./usage.page.tsx')),
  prompts: pageChunk(() => import('./prompts.page.tsx')),
  promptset: pageChunk(() => import('./promptset.page.tsx')),
  settings: pageChunk(() => import('./settings.page.tsx')),
  datasets: pageChunk(() => import('./datasets.page.tsx')),
  dataset: pageChunk(() => import('./dataset.page.tsx')),
  experimentsCompare: pageChunk(() => import('./experiments-compare.page.tsx')),
  playground: pageChunk(() => import('./playground.page.tsx')),
  evaluators: pageChunk(() => import('./evaluators.page.tsx')),
  evaluatorNew: pageChunk(() => import('./evaluator-new.page.tsx')),
  evaluator: pageChunk(() => import('./evaluator.page.tsx')),
  llmConnections: pageChunk(() => import('./llm-connections.page.tsx')),
  monitors: pageChunk(() => import('./monitors.page.tsx')),
  monitor: pageChunk(() => import('./monitor.page.tsx')),
  channels: pageChunk(() => import('./notification-channels.page.tsx')),
  dashboards: pageChunk(() => import('./dashboards.page.tsx')),
  auditLog: pageChunk(() => import('./audit-log.page.tsx')),
  sso: pageChunk(() => import('./sso.page.tsx')),
  members: pageChunk(() => import('./members.page.tsx')),
  setup: pageChunk(() => import('./setup.page.tsx')),
  acceptInvitation: pageChunk(() => import('./accept-invitation.page.tsx')),
  forgotPassword: pageChunk(() => import('./forgot-password.page.tsx')),
  resetPassword: pageChunk(() => import('./reset-password.page.tsx')),
  profile: pageChunk(() => import('./profile.page.tsx')),
} as const

/** The chunk a path is served by, as the routes in app.tsx map them. */
export function chunkOfPath(pathname: string): keyof typeof pageChunks | undefined {
  const [, section, id] = pathname.split('/')
  switch (section) {
    case 'shared':
      return 'sharedTrace'
    case '':
    case 'traces':
      return id ? 'trace' : 'traces'
    case 'sessions':
      return id ? 'session' : 'sessions'
    case 'prompts':
      return id ? 'promptset' : 'prompts'
    case 'datasets':
      return id ? 'dataset' : 'datasets'
    case 'experiments':
      return 'experimentsCompare'
    case 'evaluators':
      return id === 'new' ? 'evaluatorNew' : id ? 'evaluator' : 'evaluators'
    case 'llm-connections':
      return 'llmConnections'
    case 'monitors':
      return id ? 'monitor' : 'monitors'
    case 'channels':
      return 'channels'
    case 'dashboards':
      return 'dashboards'
    case 'audit-log':
      return 'auditLog'
    case 'sso':
      return 'sso'
    case 'members':
      return 'members'
    case 'setup':
      return 'setup'
    case 'invitations':
      return 'acceptInvitation'
    case 'forgot-password':
      return 'forgotPassword'
    case 'reset-password':
      return 'resetPassword'
    case 'profile':
      return 'profile'
    case 'usage':
    case 'settings':
    case 'playground':
      return section
    default:
      return undefined
  }
}
