import { evaluateDueMonitor, type Db } from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { evaluateMonitor } from './monitor-evaluation.ts'

// The monitors' evaluation, off the write path: every MONITOR_POLL_INTERVAL_MS, MONITOR_CONCURRENCY
// lanes each claim the next due monitor (FOR UPDATE SKIP LOCKED) until none is due. Every
// evaluator replica runs it; the row lock and next_evaluation_at make each monitor's evaluation
// happen once per interval among them all.

export interface MonitorLoopOptions {
  db: Db
  pollIntervalMs: number
  concurrency: number
  logger: Logger
}

export interface MonitorLoop {
  /** Evaluates every monitor due now (what the timer runs; tests call it to not wait); the count evaluated. */
  evaluateDue(): Promise<number>
  close(): Promise<void>
}

export function startMonitorLoop(options: MonitorLoopOptions): MonitorLoop {
  let timer: NodeJS.Timeout | undefined
  let current: Promise<number> = Promise.resolve(0)
  let closed = false

  async function lane(): Promise<number> {
    let evaluated = 0
    while (!closed) {
      try {
        if (!(await evaluateDueMonitor(options.db, (trx, monitor, now) => evaluateMonitor(trx, monitor, now)))) break
        evaluated++
      } catch (error) {
        // That monitor is postponed by its interval (evaluateDueMonitor); the lane goes on with the next.
        options.logger.error({ err: error }, 'evaluating a monitor failed')
        evaluated++
      }
    }
    return evaluated
  }

  const evaluateDue = () => {
    current = current.then(async () => {
      const counts = await Promise.all(Array.from({ length: options.concurrency }, lane))
      return counts.reduce((sum, n) => sum + n, 0)
    })
    return current
  }
  const schedule = () => {
    if (closed) return
    timer = setTimeout(() => void evaluateDue().finally(schedule), options.pollIntervalMs)
  }
  schedule()
  return {
    evaluateDue,
    async close() {
      closed = true
      clearTimeout(timer)
      await current.catch(() => undefined)
    },
  }
}
