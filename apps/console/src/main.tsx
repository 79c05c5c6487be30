import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter } from 'react-router'
import { ApiError } from './api/client.ts'
import { prefetchFirstPage } from './api/first-page.ts'
import { sessionKey } from './api/session.api.ts'
import { chunkOfPath, pageChunks } from './pages/page-chunks.ts'
import { App } from './app.tsx'
import { startTheme } from './components/theme.tsx'
import './styles.css'

// A 401 may mean the session ended (expired, signed out elsewhere, its key revoked): the session
// is asked for again, and if it has ended the app shows the sign-in page.
function onApiError(error: unknown) {
  if (error instanceof ApiError && error.status === 401) void queryClient.invalidateQueries({ queryKey: sessionKey })
}

// Before anything renders, so the sign-in page and the app are in the same theme from the start.
startTheme()

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

// The first page's data and code, asked for before React renders anything. React renders once the
// page's chunk is here (its data keeps coming meanwhile), so the first render does not suspend on
// the chunk and pay React's Suspense fallback throttle; a chunk that fails to load is left to the
// page's own lazy loading, which shows the error where the page would be.
prefetchFirstPage(queryClient, window.location)
const firstChunk = chunkOfPath(window.location.pathname)
await (firstChunk ? pageChunks[firstChunk].load().catch(() => undefined) : undefined)

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
)
