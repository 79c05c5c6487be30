import type { Db } from '../create-db.ts'
import { createEmbeddedTestDatabase, createTestDatabase } from './test-database.ts'

/** Suites that run once on the real Postgres and once on embedded PGlite. */
export const engines: Array<{ name: string; open(options?: { migrated?: boolean }): Promise<{ db: Db; drop(): Promise<void> }> }> = [
  { name: 'postgres', open: (options) => createTestDatabase(options) },
  { name: 'pglite', open: (options) => createEmbeddedTestDatabase(options) },
]
