import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { workerModuleFile } from '@tracewell/service'
import type { FoldLimits, Summariser, SummariserMetrics } from '@tracewell/write-path'
import type { Logger } from '@tracewell/logger'
import type { SummariserThreadData, SummariserThreadMessage } from './summariser.thread.ts'

export interface SummariserThreadOptions {
  databaseUrl: string
  pollMs: number
  limits: FoldLimits
  logger: Logger
  metrics: SummariserMetrics
}

const MAX_RESTART_DELAY_MS = 30_000

export interface SummariserThread extends Summariser {
  /** The thread running now (a new one after a restart). */
  readonly worker: Worker
}

/**
 * The summariser in a worker thread of its own (summariser.thread.ts). Storing one-span traces,
 * the writer's event loop was the bottleneck, with the fold a fifth of its work while the
 * machine's other core had room: in a thread, the fold runs beside the spans' COPYs instead of
 * between them (docs/benchmarks.md). A thread that dies is started again (after 1 s, doubling to
 * 30 s while it keeps dying); a fold it left half done was a transaction, rolled back, and its
 * deltas wait for the next.
 */
export function startSummariserThread(options: SummariserThreadOptions): SummariserThread {
  const data: SummariserThreadData = { databaseUrl: options.databaseUrl, pollMs: options.pollMs, limits: options.limits }
  let closing = false
  let restarts = 0
  let restartTimer: NodeJS.Timeout | undefined
  let current: { worker: Worker; exited: Promise<unknown> }

  const start = () => {
    const worker = new Worker(workerModuleFile(new URL('../dist/summariser.thread.mjs', import.meta.url), new URL('./summariser.thread.ts', import.meta.url)), { workerData: data })
    current = { worker, exited: once(worker, 'exit') }
    worker.on('message', (message: SummariserThreadMessage) => {
      if (message.kind === 'folded') {
        restarts = 0
        options.metrics.deltas.inc(message.deltas)
        options.metrics.traces.inc(message.traces)
      } else options.logger[message.level](message.object, message.message)
    })
    worker.on('error', (error) => options.logger.error({ err: { message: error.message } }, 'summariser thread failed'))
    worker.on('exit', (code) => {
      if (closing) return
      const delay = Math.min(MAX_RESTART_DELAY_MS, 1_000 * 2 ** restarts++)
      options.logger.warn({ code, restartInMs: delay }, 'summariser thread stopped; starting another')
      restartTimer = setTimeout(start, delay)
    })
  }
  start()

  return {
    get worker() {
      return current.worker
    },
    async close() {
      closing = true
      clearTimeout(restartTimer)
      current.worker.postMessage('close')
      await current.exited
    },
  }
}
