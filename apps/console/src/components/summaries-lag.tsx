import { useSummariesStatus } from '../api/traces.api.ts'

// Below this, the summaries keep up with what arrives (the summariser polls every 200 ms): saying
// so for every fold would only make the page flicker.
const NOTICEABLE_LAG_SECONDS = 2

/**
 * Says when the newest traces are stored but not yet in the summaries this page reads (the trace
 * list, sessions, usage): they appear within seconds, and a person looking for one should know.
 */
export function SummariesLag({ projectId }: { projectId: string }) {
  const status = useSummariesStatus(projectId)
  const lag = status.data?.lagSeconds ?? 0
  if (lag < NOTICEABLE_LAG_SECONDS) return null
  return (
    <p className="status summaries-lag" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Newest traces are still being summarised: this page is about {Math.round(lag)} s behind
      ({status.data?.pendingTraces.toLocaleString('en-US')} waiting).
    </p>
  )
}
