// The pages, each a chunk of its own, loaded on first use. The chunk of the page the browser opens
// on is asked for at start-up, beside the session check, instead of after it.

export const pageChunks = {
  traces: () => import('./traces.page.tsx'),
  trace: () => import('./trace.page.tsx'),
  sessions: () => import('./sessions.page.tsx'),
  session: () => import('./session.page.tsx'),
  usage: () => import('./usage.page.tsx'),
  prompts: () => import('./prompts.page.tsx'),
  promptset: () => import('./promptset.page.tsx'),
  settings: () => import('./settings.page.tsx'),
} as const

/** The chunk a path is served by, as the routes in app.tsx map them. */
export function chunkOfPath(pathname: string): keyof typeof pageChunks | undefined {
  const [, section, id] = pathname.split('/')
  switch (section) {
    case '':
    case 'traces':
      return id ? 'trace' : 'traces'
    case 'sessions':
      return id ? 'session' : 'sessions'
    case 'prompts':
      return id ? 'promptset' : 'prompts'
    case 'usage':
    case 'settings':
      return section
    default:
      return undefined
  }
}
