import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * One memory-reducing full collection, for a service that has just started: start-up leaves
 * its garbage in pages V8 keeps. Loading and building the app grows the young generation to its
 * largest (`--max-semi-space-size`, 8 MiB each half) and V8 keeps the pages it shrinks back from
 * in a pool; its memory reducer, which would hand them back, runs only once it judges the
 * allocation rate low, which an idle service never got (`--trace-memory-reducer`: "high alloc"
 * every 8 s), so only its watchdog did, long after start-up's last full collection. Done here,
 * an idle ingest rests markedly lower (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 *
 * `gc` exists only in a context created while `--expose-gc` is set, so the flag is set for the
 * moment it takes to make one, and the context is dropped after the call. The 'last-resort'
 * flavour is V8's memory-reducing collection (what a low-memory notification runs, releasing the
 * pooled pages), where a plain `gc()` keeps them. It runs once, after the service listens
 * (binding the listeners makes garbage too; done before, ingest rested higher).
 */
export function releaseStartupGarbage(): void {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as NodeJS.GCFunction
  setFlagsFromString('--no-expose-gc')
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
}
