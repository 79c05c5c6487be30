import { createEmbeddedTestDatabase, createTestDatabase } from '../src/testing/index.ts'
import type { Db } from '../src/index.ts'

/** The db suites run once on the real Postgres and once on embedded PGlite. */
export const engines: Array<{ name: string; open(): Promise<{ db: Db; drop(): Promise<void> }> }> = [
  { name: 'postgres', open: () => createTestDatabase() },
  { name: 'pglite', open: () => createEmbeddedTestDatabase() },
]
