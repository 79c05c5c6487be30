import { setTimeout as sleep } from 'node:timers/promises'
import { pino, type Logger } from 'pino'

// Start-up against a Postgres or Redis that is not there yet (a restart, a pod scheduled first):
// retry with capped exponential backoff for STARTUP_RETRY_SECONDS, saying so once in one JSON
// line, then give up in one JSON line with a non-zero exit, so the orchestrator restarts the
// process instead of a crash loop of stack traces. An answer that will not improve by waiting
// (a wrong password, a missing database) ends it at once.

/** Something a process needs answering before it can start. */
export interface StartupDependency {
  /** As the log line names it: "Postgres", "Redis". */
  name: string
  /** host:port (or socket path) it is reached at. */
  address: string
  /** Resolves once it answers, within `timeoutMs`; rejects with the cause otherwise. */
  probe(timeoutMs: number): Promise<void>
  /** An error that waiting will not cure. */
  isPermanent(error: unknown): boolean
}

export interface StartupWaitOptions {
  retrySeconds: number
  /** Where the JSON lines go; standard error unless a test captures them. */
  logger?: Logger
}

const FIRST_DELAY_MS = 250
const MAX_DELAY_MS = 5_000
const MAX_PROBE_MS = 5_000

/** Thrown when a dependency did not answer in time, or answered with a permanent error; already logged. */
export class StartupDependencyError extends Error {
  override name = 'StartupDependencyError'
}

/** Waits until every dependency answers, one after the other. */
export async function waitForDependencies(dependencies: readonly StartupDependency[], options: StartupWaitOptions): Promise<void> {
  const logger = options.logger ?? startupLogger()
  const deadline = Date.now() + options.retrySeconds * 1000
  for (const dependency of dependencies) await waitFor(dependency, deadline, options.retrySeconds, logger)
}

/** For an entry point: waits, or exits with status 1 once the failure is logged. */
export async function waitForDependenciesOrExit(dependencies: readonly StartupDependency[], options: StartupWaitOptions): Promise<void> {
  try {
    await waitForDependencies(dependencies, options)
  } catch (error) {
    if (!(error instanceof StartupDependencyError)) throw error
    process.exit(1)
  }
}

async function waitFor(dependency: StartupDependency, deadline: number, retrySeconds: number, logger: Logger): Promise<void> {
  const { name, address } = dependency
  const fields = { dependency: name.toLowerCase(), address }
  const started = Date.now()
  let delay = FIRST_DELAY_MS
  let failures = 0
  for (;;) {
    let cause: string
    try {
      await dependency.probe(Math.max(1, Math.min(MAX_PROBE_MS, deadline - Date.now())))
      if (failures > 0) logger.info({ ...fields, waitedSeconds: secondsSince(started) }, `${name} at ${address} answers`)
      return
    } catch (error) {
      cause = causeOf(error)
      if (dependency.isPermanent(error)) {
        logger.fatal({ ...fields, cause }, `${name} at ${address} refused: ${cause}; exiting`)
        throw new StartupDependencyError(cause)
      }
    }
    failures++
    const remaining = deadline - Date.now()
    if (remaining <= 0) {
      logger.fatal({ ...fields, cause, waitedSeconds: secondsSince(started) }, `${name} at ${address} is still unreachable after ${retrySeconds} s (${cause}); exiting`)
      throw new StartupDependencyError(cause)
    }
    if (failures === 1) logger.warn({ ...fields, cause, retrySeconds }, `${name} at ${address} is unreachable (${cause}); retrying for up to ${retrySeconds} s`)
    await sleep(Math.min(delay, remaining))
    delay = Math.min(delay * 2, MAX_DELAY_MS)
  }
}

/** One line: the error's code and message, and those of what it wraps (AggregateError: each attempt). */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const inner = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error.cause
  const own = error.message || (error as { code?: string }).code || error.name
  const nested = inner instanceof Error && inner.message !== '' && !own.includes(inner.message) ? `: ${inner.message}` : ''
  return `${own}${nested}`.replace(/\s+/g, ' ')
}

const secondsSince = (started: number) => Math.round((Date.now() - started) / 100) / 10

/** Synchronous, so that the last line is out before process.exit. */
function startupLogger(): Logger {
  return pino({}, pino.destination({ dest: 2, sync: true }))
}
