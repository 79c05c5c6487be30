import { loadConfigOrExit, MigrateConfigSchema, waitForDependenciesOrExit } from '@tracewell/config'
import { createDb } from '../create-db.ts'
import { migrateToLatest } from '../migrator.ts'
import { postgresDependency } from '../postgres-dependency.ts'

// `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database).
const config = loadConfigOrExit(MigrateConfigSchema)
// A migration job often starts beside the database it migrates: wait for it, within bounds.
if (config.DATABASE_URL) await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const db = createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR })
const target = config.DATABASE_URL ? new URL(config.DATABASE_URL).pathname.slice(1) || 'postgres' : `embedded database in ${config.DATA_DIR}`
try {
  const applied = await migrateToLatest(db)
  console.log(applied.length === 0 ? `${target}: already up to date` : `${target}: applied ${applied.join(', ')}`)
} catch (error) {
  console.error(`${target}: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await db.destroy()
}
