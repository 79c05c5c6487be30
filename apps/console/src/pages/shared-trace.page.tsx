import { useEffect, useMemo, useState } from 'react'
import { useParams } from 'react-router'
import { useSharedTrace } from '../api/trace-shares.api.ts'
import { SpanPanel } from '../components/span-panel.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { TraceSummaryStrip } from '../components/trace-summary-strip.tsx'
import { Waterfall } from '../components/waterfall.tsx'
import { buildWaterfall } from '../lib/span-tree.ts'

/**
 * The page a share link opens: one trace, read-only, outside the signed-in console (no project,
 * no navigation, no other request than the trace's). Kept out of search engines by a robots meta
 * tag here and an X-Robots-Tag header from the server.
 */
export default function SharedTracePage() {
  const { token = '' } = useParams()
  const trace = useSharedTrace(token)
  const waterfall = useMemo(() => buildWaterfall(trace.data?.spans ?? []), [trace.data])
  const [selectedId, setSelectedId] = useState<string | null>(null)
  useEffect(() => {
    const meta = document.createElement('meta')
    meta.name = 'robots'
    meta.content = 'noindex, nofollow'
    document.head.append(meta)
    return () => meta.remove()
  }, [])
  if (trace.isPending) return <Loading label="Loading the shared trace" />
  if (trace.isError) return <ErrorMessage error={trace.error} what="this shared trace (the link may have expired or been revoked)" />
  const root = waterfall.rows[0]?.span
  const selected = waterfall.rows.find((row) => row.span.spanId === (selectedId ?? root?.spanId))?.span
  return (
    <main className="page trace-page shared-trace" aria-labelledby="shared-title">
      <div className="page-header">
        <h1 id="shared-title">{root?.name ?? trace.data.traceId}</h1>
        <span className="badge">Shared, read-only</span>
      </div>
      <TraceSummaryStrip waterfall={waterfall} />
      <div className="trace-split">
        <Waterfall waterfall={waterfall} selectedSpanId={selected?.spanId ?? null} onSelect={setSelectedId} />
        {selected && <SpanPanel span={selected} traceStartMicros={waterfall.startMicros} projectId={null} scores={[]} />}
      </div>
    </main>
  )
}
