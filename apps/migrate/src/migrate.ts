import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfigOrExit, MigrateConfigSchema, waitForDependenciesOrExit } from '@tracewell/config'
import { pauseWriters, queueRedisTargetOf, resumeWritersLeftPaused, type PausedWriters, type WriterQueue } from '@tracewell/queue'
import { createDb, migrateToLatest, pendingMigrations, pendingMigrationsThatPauseWriters, postgresDependency } from '@tracewell/db'

// `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database). An app
// of its own, not part of packages/db, because it pauses the writers through the queue.
// `migrate.mjs --wait` applies nothing: it waits until something else (the migration Job) has
// applied every migration this version has, and exits 0 then, or 1 after STARTUP_RETRY_SECONDS.
// Kubernetes runs it as every service's init container, so a new version starts only on its schema.
//
// With the writers' queue in its settings (REDIS_URL or REDIS_CLUSTER_NODES, QUEUE_PREFIX,
// QUEUE_SHARDS as the writers have them), a run whose pending migrations fill new columns from the
// spans already stored pauses the writers around them, and says so; without it, it says that the
// writers must be stopped by hand.
const INITIAL_SCHEMA = '2026-11-22T0300-initial-schema'
const config = loadConfigOrExit(MigrateConfigSchema)
const waitOnly = process.argv.includes('--wait')
// A migration job often starts beside the database it migrates: wait for it, within bounds.
if (config.DATABASE_URL) await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const db = createDb({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR })
const target = config.DATABASE_URL ? new URL(config.DATABASE_URL).pathname.slice(1) || 'postgres' : `embedded database in ${config.DATA_DIR}`
try {
  if (waitOnly) await waitForSchema()
  else await migrate()
} catch (error) {
  console.error(`${target}: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await db.destroy()
}

async function migrate(): Promise<void> {
  const redis = queueRedisTargetOf(config)
  const writerQueue: WriterQueue | undefined = redis && { redis, prefix: config.QUEUE_PREFIX, shards: config.QUEUE_SHARDS }
  // A run that died while the writers were paused left them so: this one lets them go first. Best
  // effort: a queue that does not answer fails the run only where it has to pause the writers.
  if (writerQueue) {
    await resumeWritersLeftPaused(writerQueue).then(
      (resumed) => resumed > 0 && console.log(`${target}: resumed the writers an earlier run left paused`),
      (error: unknown) => console.warn(`${target}: could not check the writers' queue (${error instanceof Error ? error.message : String(error)})`),
    )
  }
  // On a new database no writer has stored anything yet: nothing to pause.
  const fresh = (await pendingMigrations(db)).includes(INITIAL_SCHEMA)
  const backfills = fresh ? [] : await pendingMigrationsThatPauseWriters(db)
  let paused: PausedWriters | undefined
  if (backfills.length > 0 && writerQueue) {
    console.log(`${target}: pausing the writers for ${backfills.join(', ')} (ingest keeps queueing)`)
    paused = await pauseWriters(writerQueue, config.STARTUP_RETRY_SECONDS * 1000, (active) => console.log(`${target}: waiting for the writers to finish ${active} job(s)`))
  } else if (backfills.length > 0) {
    console.log(`${target}: ${backfills.join(', ')} fill new columns from stored spans: stop the writers while they run (no queue settings to pause them)`)
  }
  try {
    const applied = await migrateToLatest(db)
    console.log(applied.length === 0 ? `${target}: already up to date` : `${target}: applied ${applied.join(', ')}`)
  } finally {
    if (paused) {
      await paused.resume()
      console.log(`${target}: resumed the writers`)
    }
  }
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
