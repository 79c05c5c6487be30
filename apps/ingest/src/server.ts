import { IngestConfigSchema, loadConfigOrExit } from '@tracewell/config'
import { assertSchemaIsCurrent, MigrationError } from '@tracewell/db'
import { runServer } from '@tracewell/http'
import { buildApp } from './app.ts'

// `npm run start:ingest`: the ingest service alone (default port 3001).
const config = loadConfigOrExit(IngestConfigSchema)
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
