import type { JanitorConfig } from '@tracewell/config'
import { createDb, type Db } from '@tracewell/db'
import { createApp, databaseAnswers, dbPlugin, healthPlugin, installErrorHandler, messageBody, metricsPlugin, openApiPlugin, type App } from '@tracewell/http'
import { cleanupRoutes } from './routes/cleanup.routes.ts'

export interface JanitorDeps {
  /** A database owned by the caller (tests, server.ts after its schema check); not closed with the app. */
  db?: Db
}

/** The janitor service: the cleanup endpoint plus /healthz, /readyz and /metrics. */
export async function buildApp(config: JanitorConfig, deps: JanitorDeps = {}): Promise<App> {
  const app = createApp({ logLevel: config.LOG_LEVEL })
  installErrorHandler(app, messageBody)
  const db = deps.db ?? createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })

  await app.register(metricsPlugin)
  await app.register(healthPlugin, { readinessChecks: { postgres: databaseAnswers(db) } })
  await app.register(openApiPlugin, {
    title: 'Tracewell janitor',
    description: 'Deletes spans older than each project retention policy; called by a cron job.',
  })
  await app.register(dbPlugin, { db, closeOnShutdown: deps.db === undefined })
  await app.register(cleanupRoutes, {
    cronApiKey: config.CRON_API_KEY,
    batchSize: config.CLEANUP_BATCH_SIZE,
    timeBudgetMs: config.CLEANUP_TIME_BUDGET_MS,
  })
  return app
}
