import { AllInOneConfigSchema, loadConfigOrExit, waitForDependenciesOrExit } from '@tracewell/config'
import { postgresDependency } from '@tracewell/db'
import { redisDependency, runServer } from '@tracewell/http'
import { listenOtlpGrpcOrExit } from '@tracewell/ingest'
import { buildAllInOneApp } from './app.ts'
import { defaultKeysBanner, shownBaseUrl } from './default-keys.banner.ts'
import { defaultKeysPath } from './default-keys.file.ts'

const config = loadConfigOrExit(AllInOneConfigSchema)
// Only what is configured: without the URLs the embedded database and in-process queue are used.
await waitForDependenciesOrExit(
  [...(config.DATABASE_URL ? [postgresDependency(config.DATABASE_URL)] : []), ...(config.REDIS_URL ? [redisDependency(config.REDIS_URL)] : [])],
  { retrySeconds: config.STARTUP_RETRY_SECONDS },
)
const { app, firstStart } = await buildAllInOneApp(config)
await runServer(app, { host: config.HOST, port: config.PORT })
await listenOtlpGrpcOrExit(app, { host: config.HOST, port: config.GRPC_PORT })
const address = app.server.address()
const baseUrl = shownBaseUrl(config.HOST, typeof address === 'object' && address ? address.port : config.PORT)
if (firstStart) {
  const heading = `Tracewell is ready. The database stores only the keys' hashes; the keys are kept in ${defaultKeysPath(config.DATA_DIR)}
(readable by you only), and \`npm run keys\` shows them again until one of them is revoked.`
  process.stdout.write(defaultKeysBanner(firstStart, baseUrl, heading))
}
app.log.info(
  { database: config.DATABASE_URL ? 'postgres' : `embedded (${config.DATA_DIR})`, queue: config.REDIS_URL ? 'redis' : 'in-process' },
  `Tracewell listening on ${baseUrl}`,
)
