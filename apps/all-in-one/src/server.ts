import { AllInOneConfigSchema, loadConfigOrExit, waitForDependenciesOrExit } from '@tracewell/config'
import { postgresDependency } from '@tracewell/db'
import { redisDependency, runServer } from '@tracewell/http'
import { buildAllInOneApp } from './app.ts'
import { firstStartBanner } from './first-start-banner.ts'

const config = loadConfigOrExit(AllInOneConfigSchema)
// Only what is configured: without the URLs the embedded database and in-process queue are used.
await waitForDependenciesOrExit(
  [...(config.DATABASE_URL ? [postgresDependency(config.DATABASE_URL)] : []), ...(config.REDIS_URL ? [redisDependency(config.REDIS_URL)] : [])],
  { retrySeconds: config.STARTUP_RETRY_SECONDS },
)
const { app, firstStart } = await buildAllInOneApp(config)
await runServer(app, { host: config.HOST, port: config.PORT })
const shownHost = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST
const address = app.server.address()
const port = typeof address === 'object' && address ? address.port : config.PORT
if (firstStart) process.stdout.write(firstStartBanner(firstStart, `http://${shownHost}:${port}`))
app.log.info(
  { database: config.DATABASE_URL ? 'postgres' : `embedded (${config.DATA_DIR})`, queue: config.REDIS_URL ? 'redis' : 'in-process' },
  `Tracewell listening on http://${shownHost}:${port}`,
)
