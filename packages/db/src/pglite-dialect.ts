import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely'

// A Kysely dialect over embedded PGlite. The published adapters pin older PGlite releases and
// do not serialise transactions; PGlite is one connection, so a transaction must hold it alone
// or another caller's statements would run inside it. Queries otherwise compile exactly as for
// Postgres, so the same repositories and migrations run on both.

class PgliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite
  constructor(pglite: PGlite) {
    this.#pglite = pglite
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#pglite.query<R>(compiledQuery.sql, compiledQuery.parameters as unknown[])
    return {
      rows: result.rows,
      ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
    }
  }

  // eslint-disable-next-line require-yield -- streaming is not offered by PGlite
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries')
  }
}

/** A one-holder lock: PGlite has a single session, so only one connection may be out at a time. */
class ConnectionLock {
  #tail: Promise<void> = Promise.resolve()

  acquire(): Promise<() => void> {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const ready = this.#tail.then(() => release)
    this.#tail = this.#tail.then(() => held)
    return ready
  }
}

class PgliteDriver implements Driver {
  readonly #open: () => Promise<PGlite>
  #pglite: PGlite | undefined
  #connection: PgliteConnection | undefined
  readonly #lock = new ConnectionLock()
  readonly #releases = new Map<DatabaseConnection, Array<() => void>>()

  constructor(open: () => Promise<PGlite>) {
    this.#open = open
  }

  /** Kysely's, once, before the first connection is acquired: opens the database. */
  async init(): Promise<void> {
    const pglite = await this.#open()
    await pglite.waitReady
    this.#pglite = pglite
    this.#connection = new PgliteConnection(pglite)
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = this.#connection as PgliteConnection
    const release = await this.#lock.acquire()
    const pending = this.#releases.get(connection) ?? []
    pending.push(release)
    this.#releases.set(connection, pending)
    return connection
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#releases.get(connection)?.shift()?.()
  }

  async destroy(): Promise<void> {
    await this.#pglite?.close()
  }
}

/** The dialect of the PGlite database that `open` makes, on the first query. */
export class PgliteDialect implements Dialect {
  readonly #open: () => Promise<PGlite>
  constructor(open: () => Promise<PGlite>) {
    this.#open = open
  }
  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    return new PgliteDriver(this.#open)
  }
  createIntrospector(db: Kysely<Record<string, never>>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }
}
