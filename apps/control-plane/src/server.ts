import { ControlPlaneConfigSchema, loadConfigOrExit, waitForDependenciesOrExit } from '@tracewell/config'
import { assertSchemaIsCurrent, createDb, MigrationError, postgresDependency } from '@tracewell/db'
import { runServer } from '@tracewell/http'
import { buildApp } from './app.ts'

const config = loadConfigOrExit(ControlPlaneConfigSchema)
await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const db = createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
try {
  await assertSchemaIsCurrent(db)
} catch (error) {
  if (!(error instanceof MigrationError)) throw error
  process.stderr.write(`Cannot start the control plane: ${error.message}\n`)
  await db.destroy()
  process.exit(1)
}
const app = await buildApp(config, { db })
app.addHook('onClose', async () => db.destroy())
if (config.ADMIN_API_KEY === undefined) app.log.info('ADMIN_API_KEY is unset: POST /api/teams is refused; create teams with INIT_TEAM_NAME')
await runServer(app, { host: config.HOST, port: config.PORT })
