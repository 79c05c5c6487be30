import {
  completeFinishedExperiments,
  completeFinishedRuns,
  listEnabledEvaluators,
  stalePendingJudgments,
  stalePendingResults,
  startQueuedExperiments,
  startQueuedRuns,
  takeNewTracesPage,
  withStatementTimeout,
  type Executor,
  type NewTraceCursor,
  withAdvisoryLock,
  type Db,
} from '@tracewell/db'
import type { ProjectJobQueue } from '@tracewell/queue'
import type { Logger } from '@tracewell/logger'

// What the worker judges, found in the database every EVALUATOR_POLL_INTERVAL_MS: each enabled
// evaluator's new traces once complete (no span arrived for EVALUATOR_TRACE_QUIET_MS), the traces
// of queued runs, the items of queued experiments, and pending judgments and experiment results
// whose queue job was lost. It reads trace_summaries and
// spans, never the writer's store path. One worker at a time looks (an advisory lock); every
// worker judges.

export interface SchedulerOptions {
  db: Db
  queue: ProjectJobQueue
  /** The experiment items' queue. */
  experimentQueue: ProjectJobQueue
  pollIntervalMs: number
  /** Postgres statement timeout of each statement of a look (EVALUATOR_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number
  quietMs: number
  lookbackMs: number
  logger: Logger
}

/** The advisory lock of the look for work (its own key; the janitor's cleanup has another). */
const schedulerLockKey = 0x7477_6576_616c_0001n

/** Traces taken per evaluator per look; the rest are taken on the next look. */
const newTracesPerLook = 500

/** A pending judgment untouched this long has lost its queue job (a crash between its row and the queue). */
const stalePendingMs = 5 * 60_000

export interface Scheduler {
  /** One look, now (what the timer runs; tests call it to not wait). */
  look(): Promise<void>
  close(): Promise<void>
}

export function startScheduler(options: SchedulerOptions): Scheduler {
  const { db, queue } = options
  let timer: NodeJS.Timeout | undefined
  let current: Promise<void> = Promise.resolve()
  let closed = false

  // Every statement of a look runs under a statement timeout (SET LOCAL, which PgBouncer's
  // transaction pooling keeps to the statement's own transaction): a statement that the planner
  // gets wrong is stopped in Postgres, never left running on a core after the evaluator stopped.
  const timed = <T>(work: (executor: Executor) => Promise<T>) => withStatementTimeout(db, options.statementTimeoutMs, work)
  // Per evaluator, where its next look at new traces goes on (takeNewTracesPage pages the window).
  const resumeAfter = new Map<string, NewTraceCursor>()

  async function lookOnce(): Promise<void> {
    await withAdvisoryLock(db, schedulerLockKey, async () => {
      const evaluators = await timed((executor) => listEnabledEvaluators(executor))
      for (const evaluator of evaluators) {
        const window = { quietMs: options.quietMs, lookbackMs: options.lookbackMs, limit: newTracesPerLook, after: resumeAfter.get(evaluator.id) }
        const page = await takeNewTracesPage(db, evaluator, window, options.statementTimeoutMs)
        if (page.resumeAfter) resumeAfter.set(evaluator.id, page.resumeAfter)
        else resumeAfter.delete(evaluator.id)
        await queue.add(page.jobIds.map((jobId) => ({ jobId, projectId: evaluator.projectId })))
      }
      await queue.add(await timed((executor) => startQueuedRuns(executor)))
      await timed((executor) => completeFinishedRuns(executor))
      await queue.add(await timed((executor) => stalePendingJudgments(executor, stalePendingMs, 1_000)))
      await options.experimentQueue.add(await timed((executor) => startQueuedExperiments(executor)))
      await timed((executor) => completeFinishedExperiments(executor))
      await options.experimentQueue.add(await timed((executor) => stalePendingResults(executor, stalePendingMs, 1_000)))
    })
  }

  const look = () => {
    current = current.then(lookOnce).catch((error: unknown) => options.logger.error({ err: error }, 'looking for traces to judge failed'))
    return current
  }
  const schedule = () => {
    if (closed) return
    timer = setTimeout(() => void look().finally(schedule), options.pollIntervalMs)
  }
  schedule()
  return {
    look,
    async close() {
      closed = true
      clearTimeout(timer)
      await current
    },
  }
}
