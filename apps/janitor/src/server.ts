import { JanitorConfigSchema, loadConfigOrExit, waitForDependenciesOrExit } from '@tracewell/config'
import { assertSchemaIsCurrent, createDb, postgresDependency } from '@tracewell/db'
import { runServer } from '@tracewell/http'
import { buildApp } from './app.ts'

// `npm run start:janitor`. The cleanup itself is triggered from outside (a Kubernetes CronJob
// calling GET /api/cron/cleanup-traces with the cron-api-key header); this process only serves it.
const config = loadConfigOrExit(JanitorConfigSchema)
await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const db = createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
try {
  await assertSchemaIsCurrent(db)
} catch (error) {
  // Refuse a database that is behind, or one that does not answer, in one line.
  process.stderr.write(`Janitor cannot start: ${error instanceof Error ? error.message : String(error)}\n`)
  await db.destroy()
  process.exit(1)
}

const app = await buildApp(config, { db })
app.addHook('onClose', async () => db.destroy())
await runServer(app, { host: config.HOST, port: config.PORT })
