import pg from 'pg'

// What a failed query means for the request that made it. The HTTP services answer a database
// they cannot reach with 503 and Retry-After (the request may well succeed in a moment), and a
// query that ran past its statement timeout with a 400 that says to narrow it; anything else is
// a bug, a 500.

/** SQLSTATEs of a server that is starting, shutting down or full; class 08 is a broken connection. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

/** Socket errors of a server that is gone or unreachable. */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'])

// node-postgres reports a connection that ends or cannot be made in time with plain Errors.
const UNAVAILABLE_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /^Client has encountered a connection error/, /^Connection ended/]

/** Whether `error` says the database cannot be reached right now (rather than that the query was wrong). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (error instanceof pg.DatabaseError) return error.code !== undefined && (error.code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(error.code))
  const code = (error as NodeJS.ErrnoException).code
  if (code !== undefined && UNAVAILABLE_SOCKET_CODES.has(code)) return true
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable)
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message))
}

/** Whether `error` is Postgres cancelling a statement that ran past its `statement_timeout`. */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code === '57014' && /statement timeout/.test(error.message)
}
