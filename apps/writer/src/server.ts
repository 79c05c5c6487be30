import { loadConfigOrExit, waitForDependenciesOrExit, WriterConfigSchema } from '@tracewell/config'
import { assertSchemaIsCurrent, createDb, MigrationError, postgresDependency } from '@tracewell/db'
import { redisDependency, runServer } from '@tracewell/http'
import { buildApp } from './app.ts'

const config = loadConfigOrExit(WriterConfigSchema)
// The writer reads jobs from Redis into Postgres: both must answer before it takes any.
await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL), redisDependency(config.REDIS_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const db = createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
try {
  // A writer on an outdated schema would fail every insert and push every job to the failed set.
  await assertSchemaIsCurrent(db)
} catch (error) {
  await db.destroy()
  if (!(error instanceof MigrationError)) throw error
  process.stderr.write(`${error.message}\n`)
  process.exit(1)
}
const app = await buildApp(config, { db, closeDb: true })
await runServer(app, { host: config.HOST, port: config.PORT })
