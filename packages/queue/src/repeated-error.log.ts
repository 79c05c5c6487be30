import type { Logger } from '@tracewell/logger'
/**
 * Logs an error that may repeat thousands of times a second (a worker whose Redis is unreachable
 * or refuses its commands) once, then at most once per `windowMs` with how many were left
 * unlogged, instead of one line each: an outage must not flood the logs, nor the disk under them.
 */
export function repeatedErrorLog(logger: Pick<Logger, 'warn'>, message: string, windowMs = 30_000): (error: Error) => void {
  let windowStart = 0
  let suppressed = 0
  return (error) => {
    const now = Date.now()
    if (now - windowStart < windowMs) {
      suppressed++
      return
    }
    logger.warn({ err: { message: error.message }, ...(suppressed > 0 ? { suppressedSinceLast: suppressed } : {}) }, message)
    windowStart = now
    suppressed = 0
  }
}
