import type { ControlPlaneConfig } from '@tracewell/config'
import { createDb, type Db } from '@tracewell/db'
import { apiKeysPlugin, createApp, databaseAnswers, dbPlugin, healthPlugin, installErrorHandler, messageBody, metricsPlugin, openApiPlugin, type App } from '@tracewell/http'
import { bootstrapFromSettings } from './bootstrap.ts'
import { consoleAssetsPlugin } from './console/console-assets.plugin.ts'
import { controlPlaneRoutes } from './routes/control-plane.routes.ts'

export interface ControlPlaneDeps {
  /** A database owned by the caller (closed by the caller); otherwise one is opened and closed here. */
  db?: Db
  /** Where the built console is; @tracewell/console's dist/ unless a test brings its own. */
  consoleDistDir?: string
}

/** The control-plane service, ready to listen; INIT_* bootstrap already applied. */
export async function buildApp(config: ControlPlaneConfig, deps: ControlPlaneDeps = {}): Promise<App> {
  const db = deps.db ?? createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
  const app = createApp({ logLevel: config.LOG_LEVEL })
  installErrorHandler(app, messageBody)
  await app.register(metricsPlugin)
  await app.register(healthPlugin, { readinessChecks: { postgres: databaseAnswers(db) } })
  await app.register(openApiPlugin, {
    title: 'Tracewell control plane',
    description: 'API keys, prompt registry, projects, retention settings and trace queries.',
  })
  await app.register(dbPlugin, { db, closeOnShutdown: deps.db === undefined })
  await app.register(apiKeysPlugin, { ttlMs: config.KEY_CACHE_TTL_MS, outageGraceMs: config.KEY_OUTAGE_GRACE_MS })
  await bootstrapFromSettings(db, config, app.log)
  const sessionSecret = config.SESSION_SECRET
  await app.register(controlPlaneRoutes, {
    adminApiKey: config.ADMIN_API_KEY,
    consoleSessions: sessionSecret === undefined ? undefined : { secret: sessionSecret, keyCacheTtlMs: config.KEY_CACHE_TTL_MS },
  })
  // The console signs people in with cookies, so it is served only where they can be signed.
  if (sessionSecret !== undefined) await app.register(consoleAssetsPlugin, { distDir: deps.consoleDistDir })
  else app.log.info('SESSION_SECRET is unset: the web console is not served')
  return app
}
