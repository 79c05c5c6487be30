import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfigOrExit, MigrateConfigSchema, waitForDependenciesOrExit } from '@tracewell/config'
import { createDb } from '../create-db.ts'
import { migrateToLatest, pendingMigrations } from '../migrator.ts'
import { postgresDependency } from '../postgres-dependency.ts'

// `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database).
// `migrate.mjs --wait` applies nothing: it waits until something else (the migration Job) has
// applied every migration this version has, and exits 0 then, or 1 after STARTUP_RETRY_SECONDS.
// Kubernetes runs it as every service's init container, so a new version starts only on its schema.
const config = loadConfigOrExit(MigrateConfigSchema)
const waitOnly = process.argv.includes('--wait')
// A migration job often starts beside the database it migrates: wait for it, within bounds.
if (config.DATABASE_URL) await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const db = createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR })
const target = config.DATABASE_URL ? new URL(config.DATABASE_URL).pathname.slice(1) || 'postgres' : `embedded database in ${config.DATA_DIR}`
try {
  if (waitOnly) await waitForSchema()
  else {
    const applied = await migrateToLatest(db)
    console.log(applied.length === 0 ? `${target}: already up to date` : `${target}: applied ${applied.join(', ')}`)
  }
} catch (error) {
  console.error(`${target}: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await db.destroy()
}

async function waitForSchema(): Promise<void> {
  const deadline = Date.now() + config.STARTUP_RETRY_SECONDS * 1000
  let said = ''
  for (;;) {
    const pending = await pendingMigrations(db)
    if (pending.length === 0) {
      console.log(`${target}: schema is current`)
      return
    }
    const waiting = `${target}: waiting for ${pending.length} migration(s) to be applied (${pending.join(', ')})`
    if (waiting !== said) console.log((said = waiting))
    if (Date.now() > deadline) throw new Error(`still ${pending.length} migration(s) behind after ${config.STARTUP_RETRY_SECONDS} s (STARTUP_RETRY_SECONDS): has the migration Job run?`)
    await sleep(2_000)
  }
}
