import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import { parseJsonText } from '@tracewell/json-text'
import pg from 'pg'
import type { Database } from './database.ts'
import { PgliteDialect } from './pglite-dialect.ts'
import type { AnyDb } from './migrations/any-db.ts'

export interface DbOptions {
  /** A postgres:// URL; without one the embedded PGlite database under `dataDir` is used. */
  databaseUrl?: string | undefined
  poolSize?: number
  /** Directory for the embedded database (PGlite keeps its files in `<dataDir>/pglite`). */
  dataDir?: string
}

export type Db = Kysely<Database>

/** A Kysely of any schema: what migrations and the engine registry take (declared beside the migrations, which import nothing from here). */
export type { AnyDb }

/** Which engine a `Db` runs on; a few operations (advisory locks across processes) differ. */
export const engineOf = new WeakMap<AnyDb, 'postgres' | 'pglite'>()

/** The pool under a `Db` on Postgres, for what Kysely cannot say (COPY, see storeSpans). */
export const poolOf = new WeakMap<AnyDb, pg.Pool>()

// json/jsonb columns are read with parseJsonText: the drivers' JSON.parse can corrupt object keys
// written with escapes on Node 24 (see @tracewell/json-text), and attribute names are user data.
const types = pg.types.builtins
const JSON_OIDS = new Set<number>([types.JSON, types.JSONB])
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    JSON_OIDS.has(oid) && format !== 'binary' ? parseJsonText : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

export function createDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      // A dead database must surface as an error the writer retries, not as a hung request.
      connectionTimeoutMillis: 5_000,
      types: pgTypes,
    })
    // An idle client losing its connection (Postgres restarted) emits 'error' on the pool; without
    // a listener that would crash the process. The next query simply gets a fresh connection.
    pool.on('error', () => {})
    // The same for a client whose connection breaks while it is checked out (a reset mid-query):
    // its query rejects, which is what callers handle, but pg also emits 'error' on the client,
    // and the pool listens only while the client is idle. Found cutting connections with a proxy.
    pool.on('connect', (client) => client.on('error', () => {}))
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    engineOf.set(db, 'postgres')
    poolOf.set(db, pool)
    return db
  }
  // `memory://` keeps the embedded database in memory (tests); anything else is a directory.
  const requested = options.dataDir ?? '.data'
  const dataDir = requested.startsWith('memory://') ? requested : join(requested, 'pglite')
  if (dataDir !== requested) mkdirSync(dataDir, { recursive: true })
  // int8 and numeric stay strings, as node-postgres returns them, so mappers see one shape.
  const keepText = (value: string) => value
  // PGlite is imported when the first query opens it, not with this module: every service loads
  // it, and one given a DATABASE_URL rested heavier for it (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
  const open = async () => {
    const { PGlite } = await import('@electric-sql/pglite')
    return new PGlite(dataDir, {
      parsers: { [types.INT8]: keepText, [types.NUMERIC]: keepText, [types.JSON]: parseJsonText, [types.JSONB]: parseJsonText },
    })
  }
  const db = new Kysely<Database>({ dialect: new PgliteDialect(open) })
  engineOf.set(db, 'pglite')
  return db
}
