import type { WriterConfig } from '@tracewell/config'
import { createDb, type Db } from '@tracewell/db'
import { createApp, databaseAnswers, dbPlugin, healthPlugin, metricsPlugin, type App } from '@tracewell/http'
import { spanBatchWorkerPlugin, workerOptionsFromSettings } from './span-batch-worker.plugin.ts'

export interface WriterDeps {
  /** A database owned by the caller (tests, the all-in-one process); by default one is created from the config. */
  db?: Db
  /** Whether closing the app closes `db` (default: only when the app created it). */
  closeDb?: boolean
  /** Tests pass `false` for quiet output. */
  logger?: boolean
}

/**
 * The writer: no public API, only /healthz, /readyz and /metrics on its own small port, and the
 * worker draining the span-batch queue into Postgres (docs/architecture.md).
 */
export async function buildApp(config: WriterConfig, deps: WriterDeps = {}): Promise<App> {
  const app = createApp({ logLevel: config.LOG_LEVEL, ...(deps.logger === undefined ? {} : { logger: deps.logger }) })
  const db = deps.db ?? createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })

  await app.register(metricsPlugin)
  await app.register(healthPlugin, {
    readinessChecks: {
      postgres: databaseAnswers(db),
      redis: () => app.spanBatchWorker.ping(),
    },
  })
  await app.register(dbPlugin, { db, closeOnShutdown: deps.closeDb ?? deps.db === undefined })
  await app.register(spanBatchWorkerPlugin, workerOptionsFromSettings(config, config.REDIS_URL))
  return app
}
