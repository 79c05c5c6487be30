import { AllInOneConfigSchema } from '@tracewell/config'
import { runService } from '@tracewell/service'
import { listenOtlpGrpcOrExit } from '@tracewell/ingest'
import { allInOneService } from './app.ts'
import { defaultKeysBanner, setupLinkBanner, shownBaseUrl } from './default-keys.banner.ts'
import { defaultKeysPath, saveBaseUrl } from './default-keys.file.ts'

// `npm start`: everything in one process. Only what is configured is waited for: without the URLs
// the embedded database and in-process queue are used.
await runService(allInOneService, AllInOneConfigSchema, {
  // Said at once: the embedded database's first start (creating it, applying the migrations) can
  // take most of a minute on a slow machine, which was silent before.
  starting(config) {
    const database = config.DATABASE_URL ? 'the Postgres at DATABASE_URL' : `the embedded database in ${config.DATA_DIR} (a first start creates it, which can take a minute)`
    process.stdout.write(`Tracewell is starting on port ${config.PORT}: opening ${database}…\n`)
  },
  beforeListen: (app, config) => listenOtlpGrpcOrExit(app, { host: config.HOST, port: config.GRPC_PORT }),
  async afterListen(app, config) {
    const address = app.server.address()
    const baseUrl = shownBaseUrl(config.HOST, typeof address === 'object' && address ? address.port : config.PORT)
    await saveBaseUrl(config.DATA_DIR, baseUrl).catch((err: unknown) => app.log.warn({ err }, 'could not note the base URL for `npm run keys`'))
    if (app.firstStart) {
      const heading = `Tracewell is ready. The database stores only the keys' hashes; the keys are kept in ${defaultKeysPath(config.DATA_DIR)}
(readable by you only), and \`npm run keys\` shows them again until one of them is revoked.`
      process.stdout.write(defaultKeysBanner(app.firstStart, baseUrl, heading))
    }
    if (app.setupToken !== null) process.stdout.write(setupLinkBanner(app.setupToken, config.PUBLIC_URL ?? baseUrl))
    app.log.info(
      { database: config.DATABASE_URL ? 'postgres' : `embedded (${config.DATA_DIR})`, queue: config.REDIS_URL ? 'redis' : 'in-process' },
      `Tracewell listening on ${baseUrl}`,
    )
  },
})
