import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter } from 'react-router'
import { ApiError } from './api/client.ts'
import { projectsQuery } from './api/projects.api.ts'
import { sessionKey, sessionQuery } from './api/session.api.ts'
import { chunkOfPath, pageChunks } from './pages/page-chunks.ts'
import { App } from './app.tsx'
import './styles.css'

// A 401 may mean the session ended (expired, signed out elsewhere, its key revoked): the session
// is asked for again, and if it has ended the app shows the sign-in page.
function onApiError(error: unknown) {
  if (error instanceof ApiError && error.status === 401) void queryClient.invalidateQueries({ queryKey: sessionKey })
}

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: onApiError }),
  mutationCache: new MutationCache({ onError: onApiError }),
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      retry: (failures, error) => !(error instanceof ApiError && error.status < 500) && failures < 2,
      refetchOnWindowFocus: false,
    },
  },
})

// What the first page needs is asked for at once, side by side, rather than one after the other
// as each component mounts: the session, the team's projects, and the page's own chunk.
void queryClient.prefetchQuery(sessionQuery)
void queryClient.prefetchQuery(projectsQuery)
const firstChunk = chunkOfPath(window.location.pathname)
if (firstChunk) void pageChunks[firstChunk]()

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
)
