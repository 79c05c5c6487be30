import { parentPort, workerData } from 'node:worker_threads'
import { createDb } from '@tracewell/db'
// The summariser's module alone, not the package's index: the thread is an isolate of its own, and
// every module it loads it holds twice over at its peak (docs/benchmarks.md, writer49).
import { startSummariser } from '@tracewell/write-path/summariser'
import type { FoldLimits } from '@tracewell/write-path'

// Runs in the writer's summariser thread (summariser-thread.ts): the fold's own work (reading the
// deltas' JSON, merging them, writing the rows' JSON) on a core of its own, beside the event loop
// that stores spans, with a connection pool of its own. What it has to say goes back as messages:
// each fold's counts, for the writer's metrics, and its log lines.

export interface SummariserThreadData {
  databaseUrl: string
  pollMs: number
  limits: FoldLimits
}

export type SummariserThreadMessage =
  | { kind: 'folded'; deltas: number; traces: number }
  | { kind: 'log'; level: 'info' | 'warn' | 'error'; object: object; message: string }

const port = parentPort
if (port === null) throw new Error('summariser.thread.ts runs as a worker thread')
const post = (message: SummariserThreadMessage) => port.postMessage(message)
// Errors lose their class between threads: the parts a log line shows are sent.
const plain = (object: object) => {
  const { err, ...rest } = object as { err?: unknown }
  return err instanceof Error ? { ...rest, err: { message: err.message, code: (err as { code?: unknown }).code } } : object
}

const data = workerData as SummariserThreadData
// One fold (one transaction) at a time, and the vacuum after it: two connections are enough.
const db = createDb({ databaseUrl: data.databaseUrl, poolSize: 2 })
const summariser = startSummariser({
  db,
  pollMs: data.pollMs,
  limits: data.limits,
  logger: {
    info: (object, message) => post({ kind: 'log', level: 'info', object: plain(object), message }),
    warn: (object, message) => post({ kind: 'log', level: 'warn', object: plain(object), message }),
    error: (object, message) => post({ kind: 'log', level: 'error', object: plain(object), message }),
  },
  onFolded: ({ deltas, traces }) => post({ kind: 'folded', deltas, traces }),
})

port.once('message', () => {
  // Asked to stop: the fold under way commits or rolls back, then the pool closes and the thread ends.
  void summariser
    .close()
    .then(() => db.destroy())
    .finally(() => port.close())
})
