import type { StartupDependency } from '@tracewell/config'
import pg from 'pg'

// SQLSTATE classes and codes that waiting can cure: the server is starting, shutting down or
// full (57P01-57P03, 53300), or the connection broke (class 08). Anything else Postgres answers,
// such as a wrong password (28P01) or a missing database (3D000), will not change by retrying.
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

/** The Postgres at `databaseUrl`, as a start-up dependency: answers once `select 1` does. */
export function postgresDependency(databaseUrl: string): StartupDependency {
  const url = new URL(databaseUrl)
  const host = url.hostname === '' ? (url.searchParams.get('host') ?? 'localhost') : url.hostname
  return {
    name: 'Postgres',
    address: `${host}:${url.port === '' ? '5432' : url.port}`,
    async probe(timeoutMs) {
      const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
      // A connection that breaks after connect() reports it here; without a listener it would crash the process.
      client.on('error', () => {})
      try {
        await client.connect()
        await client.query('select 1')
      } finally {
        await client.end().catch(() => {})
      }
    },
    isPermanent(error) {
      // Only an answer from Postgres itself can be permanent; network errors never are.
      if (!(error instanceof pg.DatabaseError) || error.code === undefined) return false
      return !error.code.startsWith('08') && !TRANSIENT_SQLSTATES.has(error.code)
    },
  }
}
