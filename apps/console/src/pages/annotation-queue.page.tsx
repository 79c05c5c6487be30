import { useQuery } from '@tanstack/react-query'
import { useCallback, useEffect, useMemo, useState } from 'react'
import { Link, useParams } from 'react-router'
import { useAnnotationQueue, useQueueWork, useScoreQueueItem, type QueueItem } from '../api/annotation-queues.api.ts'
import { useScoreConfigs } from '../api/scores.api.ts'
import { traceOptions } from '../api/traces.api.ts'
import { projectPath, useProject } from '../components/project-scope.tsx'
import { SpanPanel } from '../components/span-panel.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { Waterfall } from '../components/waterfall.tsx'
import { formatCount } from '../lib/format.ts'
import { reviewOptions, type ReviewOption } from '../lib/review-keys.ts'
import { buildWaterfall } from '../lib/span-tree.ts'

/**
 * Working a queue: the item the reviewer holds (the trace as on its page), the scores to give,
 * and keys for all of it: 1–9 give a value, Enter completes and takes the next, S skips.
 */
export default function AnnotationQueuePage() {
  const { queueId = '' } = useParams()
  const { projectId } = useProject()
  const queue = useAnnotationQueue(projectId, queueId)
  const configs = useScoreConfigs(projectId)
  const work = useQueueWork(projectId, queueId)
  const score = useScoreQueueItem(projectId)
  const [item, setItem] = useState<QueueItem | null | undefined>(undefined)
  const [given, setGiven] = useState<Record<string, string>>({})

  const queueConfigs = useMemo(() => (configs.data ?? []).filter((config) => queue.data?.scoreConfigIds.includes(config.id)), [configs.data, queue.data])
  const options = useMemo(() => reviewOptions(queueConfigs), [queueConfigs])

  const takeNext = useCallback(() => {
    setGiven({})
    work.next.mutate(undefined, { onSuccess: setItem })
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the mutation object changes every render; its mutate does not
  }, [queueId])
  useEffect(() => takeNext(), [takeNext])

  const give = useCallback(
    (option: ReviewOption) => {
      if (!item) return
      score.mutate({ item, name: option.scoreName, value: option.value }, { onSuccess: () => setGiven((before) => ({ ...before, [option.scoreName]: option.label })) })
    },
    [item, score],
  )
  // The item leaves the page as soon as it is completed or skipped: a key pressed before the next
  // one arrives would otherwise score, skip or complete the item already done.
  const moveOn = useCallback(
    (move: { mutate: (itemId: string, then: { onSuccess: () => void; onError: () => void }) => void }) => {
      if (!item) return
      setItem(undefined)
      move.mutate(item.id, { onSuccess: takeNext, onError: () => setItem(item) })
    },
    [item, takeNext],
  )
  const complete = useCallback(() => moveOn(work.complete), [moveOn, work.complete])
  const skip = useCallback(() => moveOn(work.skip), [moveOn, work.skip])

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.target instanceof HTMLElement && event.target.closest('input, textarea, select')) return
      if (event.metaKey || event.ctrlKey || event.altKey) return
      const option = options.find((candidate) => candidate.key !== '' && candidate.key === event.key)
      if (option) give(option)
      else if (event.key === 'Enter') complete()
      else if (event.key === 's' || event.key === 'S') skip()
      else return
      event.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [options, give, complete, skip])

  if (queue.isPending) return <Loading label="Loading the queue" />
  if (queue.isError) return <ErrorMessage error={queue.error} what="the queue" />
  const progress = queue.data.progress
  return (
    <section className="page queue-page" aria-labelledby="queue-title">
      <div className="page-header">
        <Link to={projectPath('/annotation-queues', projectId)} className="back">
          ← Queues
        </Link>
        <h1 id="queue-title">{queue.data.name}</h1>
        <span className="muted" aria-live="polite">
          {formatCount(progress.completed)} of {formatCount(progress.total)} done
        </span>
      </div>
      {item === undefined ? (
        work.next.isError ? <ErrorMessage error={work.next.error} what="the next item" /> : <Loading label="Taking the next item" />
      ) : item === null ? (
        <p className="card">Nothing is left to review in this queue.</p>
      ) : (
        <>
          <div className="card review-bar" role="group" aria-label="Scores to give">
            {queueConfigs.map((config) => (
              <div key={config.id} className="review-score">
                <strong>{config.name}</strong>
                {options
                  .filter((option) => option.scoreName === config.name)
                  .map((option) => (
                    <button key={option.label} type="button" className={given[config.name] === option.label ? 'button primary' : 'button'} aria-pressed={given[config.name] === option.label} onClick={() => give(option)}>
                      {option.key && <kbd>{option.key}</kbd>} {option.label}
                    </button>
                  ))}
              </div>
            ))}
            <div className="review-actions">
              <button type="button" className="button" onClick={skip} disabled={work.skip.isPending}>
                <kbd>S</kbd> Skip
              </button>
              <button type="button" className="button primary" onClick={complete} disabled={work.complete.isPending}>
                <kbd>Enter</kbd> Complete and next
              </button>
            </div>
            {(score.isError || work.complete.isError || work.skip.isError) && <ErrorMessage error={score.error ?? work.complete.error ?? work.skip.error} what="the review" />}
          </div>
          {item.objectType === 'trace' ? <QueueTrace projectId={projectId} traceId={item.objectId} /> : <p className="card">{item.objectType === 'session' ? <Link to={projectPath(`/sessions/${item.objectId}`, projectId)}>Session {item.objectId}</Link> : `Span ${item.objectId}`}</p>}
        </>
      )}
    </section>
  )
}

function QueueTrace({ projectId, traceId }: { projectId: string; traceId: string }) {
  const trace = useQuery(traceOptions(projectId, traceId))
  const waterfall = useMemo(() => buildWaterfall(trace.data?.spans ?? []), [trace.data])
  const [selectedId, setSelectedId] = useState<string | null>(null)
  if (trace.isPending) return <Loading label="Loading the trace" />
  if (trace.isError) return <ErrorMessage error={trace.error} what={`trace ${traceId}`} />
  const selected = waterfall.rows.find((row) => row.span.spanId === (selectedId ?? waterfall.rows[0]?.span.spanId))?.span
  return (
    <div className="trace-split" aria-label="The item">
      <Waterfall waterfall={waterfall} selectedSpanId={selected?.spanId ?? null} onSelect={setSelectedId} />
      {selected && <SpanPanel span={selected} traceStartMicros={waterfall.startMicros} projectId={projectId} scores={[]} />}
    </div>
  )
}
