import { IngestConfigSchema, loadConfigOrExit, waitForDependenciesOrExit } from '@tracewell/config'
import { assertSchemaIsCurrent, MigrationError, postgresDependency } from '@tracewell/db'
import { redisDependency, runServer } from '@tracewell/http'
import { buildApp } from './app.ts'
import { listenOtlpGrpcOrExit } from './grpc/listen-otlp-grpc.ts'

// `npm run start:ingest`: the ingest service alone (default port 3001).
const config = loadConfigOrExit(IngestConfigSchema)
// API keys live in Postgres and traces go to Redis: both must answer before traffic is taken.
await waitForDependenciesOrExit([postgresDependency(config.DATABASE_URL), redisDependency(config.REDIS_URL)], { retrySeconds: config.STARTUP_RETRY_SECONDS })
const app = await buildApp(config)
await app.ready()
try {
  await assertSchemaIsCurrent(app.db)
} catch (error) {
  if (!(error instanceof MigrationError)) throw error
  process.stderr.write(`${error.message}\n`)
  await app.close()
  process.exit(1)
}
await runServer(app, { host: config.HOST, port: config.PORT })
await listenOtlpGrpcOrExit(app, { host: config.HOST, port: config.GRPC_PORT })
