import type { AllInOneConfig } from '@tracewell/config'
import { bootstrapFromSettings, consoleAssetsPlugin, controlPlaneRoutes, defaultKeysAreLive, ensureDefaultWorkspace, type DefaultWorkspace } from '@tracewell/control-plane'
import { createDb, migrateToLatest, type Db } from '@tracewell/db'
import { apiKeysPlugin, createApp, databaseAnswers, dbPlugin, healthPlugin, installErrorHandler, messageBody, metricsPlugin, openApiPlugin, type App } from '@tracewell/http'
import { otlpGrpcPlugin, sendTracesRoutes } from '@tracewell/ingest'
import { cleanupRoutes } from '@tracewell/janitor'
import { readDefaultKeys, removeDefaultKeys, saveDefaultKeys } from './default-keys.file.ts'
import { keptSessionSecret, sessionSecretPath } from './session-secret.file.ts'
import { registerSpanPipeline } from './span-pipeline.ts'

export interface AllInOneApp {
  app: App
  /** The keys created on the very first start (empty database, no INIT_*), to print. */
  firstStart: DefaultWorkspace | null
}

/**
 * `npm start`: the ingest, control-plane and janitor route plugins and the writer in
 * one process, over the embedded database and in-process queue unless DATABASE_URL / REDIS_URL
 * say otherwise. The same plugins the separate services register; nothing is written twice.
 */
export interface AllInOneDeps {
  /** A database owned by the caller (closed by the caller); otherwise one is opened and closed here. */
  db?: Db
  /** Where the built console is; @tracewell/console's dist/ unless a test brings its own. */
  consoleDistDir?: string
}

export async function buildAllInOneApp(config: AllInOneConfig, deps: AllInOneDeps = {}): Promise<AllInOneApp> {
  const db = deps.db ?? createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, dataDir: config.DATA_DIR })
  // Here, unlike the separate services, migrations run at start: one command must be enough.
  await migrateToLatest(db)

  const app = createApp({ logLevel: config.LOG_LEVEL, bodyLimit: config.MAX_BODY_BYTES })
  installErrorHandler(app, messageBody)
  await app.register(metricsPlugin)
  await app.register(openApiPlugin, {
    title: 'Tracewell',
    description: 'Trace ingest, prompt registry, management API and retention cleanup in one process.',
  })
  await app.register(dbPlugin, { db, closeOnShutdown: deps.db === undefined })
  await app.register(apiKeysPlugin, { ttlMs: config.KEY_CACHE_TTL_MS, outageGraceMs: config.KEY_OUTAGE_GRACE_MS })
  // Registered after the db plugin: on close the writer finishes and the producer flushes
  // before the pool is closed (onClose hooks run in reverse order).
  const producer = await registerSpanPipeline(app, config, db)
  app.addHook('onClose', async () => producer.close())
  await app.register(healthPlugin, { readinessChecks: { postgres: databaseAnswers(db), queue: () => producer.ping() } })

  await bootstrapFromSettings(db, config, app.log)
  const firstStart = hasInitSettings(config) ? null : await ensureDefaultWorkspace(db)
  await keepDefaultKeys(db, config.DATA_DIR, firstStart, app.log)

  const limits = { maxBodyBytes: config.MAX_BODY_BYTES, maxInflatedBytes: config.MAX_INFLATED_BYTES, maxSpansPerRequest: config.MAX_SPANS_PER_REQUEST, maxJsonValues: config.MAX_JSON_VALUES }
  await app.register(sendTracesRoutes, { producer, limits })
  await app.register(otlpGrpcPlugin, { producer, limits })
  const sessionSecret = await consoleSessionSecret(config, app.log)
  await app.register(controlPlaneRoutes, { adminApiKey: config.ADMIN_API_KEY, consoleSessions: { secret: sessionSecret, keyCacheTtlMs: config.KEY_CACHE_TTL_MS } })
  await app.register(cleanupRoutes, { cronApiKey: config.CRON_API_KEY, batchSize: config.CLEANUP_BATCH_SIZE, timeBudgetMs: config.CLEANUP_TIME_BUDGET_MS })
  await app.register(consoleAssetsPlugin, { distDir: deps.consoleDistDir })
  return { app, firstStart }
}

/** SESSION_SECRET, or the one kept in DATA_DIR (made on the first start): `npm start` always serves the console. */
async function consoleSessionSecret(config: AllInOneConfig, log: App['log']): Promise<string> {
  if (config.SESSION_SECRET !== undefined) return config.SESSION_SECRET
  const { secret, kept } = await keptSessionSecret(config.DATA_DIR)
  if (!kept) log.warn({ path: sessionSecretPath(config.DATA_DIR) }, 'could not keep a session secret: console sign-ins end when this process stops (set SESSION_SECRET)')
  return secret
}

function hasInitSettings(config: AllInOneConfig): boolean {
  return [config.INIT_TEAM_NAME, config.INIT_TEAM_API_KEY, config.INIT_PROJECT_NAME, config.INIT_PROJECT_ID, config.INIT_PROJECT_API_KEY].some(
    (value) => value !== undefined,
  )
}

/**
 * Saves the keys a first start created, so that `npm run keys` can show them again, and removes
 * saved keys once either has been revoked. The keys file is a convenience: failing to write it
 * (a read-only data directory beside an external DATABASE_URL, say) does not stop the start.
 */
async function keepDefaultKeys(db: Db, dataDir: string, created: DefaultWorkspace | null, log: App['log']): Promise<void> {
  try {
    if (created !== null) return await saveDefaultKeys(dataDir, created)
    const saved = await readDefaultKeys(dataDir)
    if (saved !== null && !(await defaultKeysAreLive(db, saved))) await removeDefaultKeys(dataDir)
  } catch (error) {
    log.warn({ err: error, dataDir }, 'could not keep the default keys for `npm run keys`')
  }
}
