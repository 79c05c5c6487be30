import { encryptionKeyOf } from '@tracewell/auth'
import { defaultIngestRateLimit, defaultMaskingRules, spanLimitsOf, type AllInOneConfig } from '@tracewell/config'
import { queueRedisTargetOf } from '@tracewell/queue'
import { bootstrapFromSettings, consoleAssetsPlugin, controlPlaneRoutes, defaultKeysAreLive, ensureDefaultWorkspace, ensureInitialOwner, offerSetupLink, ssoOptionsOf, type DefaultWorkspace } from '@tracewell/control-plane'
import { createDb, summaryBacklog, type Db } from '@tracewell/db'
import { evaluatorOptionsFromSettings, evaluatorPlugin, monitorOptionsFromSettings, monitorsPlugin, notificationOptionsFromSettings, notificationsPlugin } from '@tracewell/evaluator'
import type { App } from '@tracewell/http'
import { defineService, type ServiceDeps } from '@tracewell/service'
import { createIngestRateLimiter, createProjectMaskers, otlpGrpcPlugin, sendTracesRoutes, traceLimitsOf } from '@tracewell/ingest'
import { cleanupDetails, cleanupRoutes } from '@tracewell/janitor'
import { configureSpanLimits } from '@tracewell/otlp'
import { notificationSettingsOf } from '@tracewell/notifications'
import { createOutbound, outboundOptionsOf } from '@tracewell/outbound'
import { readDefaultKeys, removeDefaultKeys, saveDefaultKeys } from './default-keys.file.ts'
import { keptLlmConnectionKey, llmConnectionKeyPath } from './llm-connection-key.file.ts'
import { keptSessionSecret, sessionSecretPath } from './session-secret.file.ts'
import { readSetupToken, removeSetupToken, saveSetupToken } from './setup-link.file.ts'
import { registerSpanPipeline } from './span-pipeline.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The keys created on the very first start (empty database, no INIT_*), for server.ts to print. */
    firstStart: DefaultWorkspace | null
    /** The setup link's token while no team has an owner, for server.ts to print beside the keys. */
    setupToken: string | null
  }
}

export interface AllInOneDeps extends ServiceDeps {
  /** Where the built console is; @tracewell/console's dist/ unless a test brings its own. */
  consoleDistDir?: string
}

/**
 * `npm start`: the ingest, control-plane and janitor route plugins and the writer in one process,
 * over the embedded database and in-process queue unless DATABASE_URL / REDIS_URL say otherwise.
 * The same plugins the separate services register; nothing is written twice. Unlike the separate
 * services it migrates at start: one command must be enough.
 */
export const allInOneService = defineService<AllInOneConfig, AllInOneDeps>({
  name: 'all-in-one',
  openApi: {
    title: 'Tracewell',
    description: 'Trace ingest, prompt registry, management API and retention cleanup in one process.',
    securitySchemes: ['apiKey', 'adminKey', 'consoleSession', 'userSession', 'cronKey'],
  },
  bodyLimit: (config) => config.MAX_BODY_BYTES,
  apiKeys: true,
  migrations: 'apply',
  async register(app, config, deps) {
    const db = app.db
    configureSpanLimits(spanLimitsOf(config))
    // On close the writer finishes and the producer flushes before the pool is closed (onClose
    // hooks run in reverse order), and the gRPC receiver's calls before them.
    const producer = await registerSpanPipeline(app, config, db)
    app.addHook('onClose', async () => producer.close())
    // Playground runs, connection tests, experiments and judges all call out through it; closed
    // after the evaluator's running calls (onClose hooks run in reverse order).
    const outbound = createOutbound(outboundOptionsOf(config))
    app.addHook('onClose', () => outbound.close())

    await bootstrapFromSettings(db, config, app.log)
    const firstStart = hasInitSettings(config) ? null : await ensureDefaultWorkspace(db)
    app.decorate('firstStart', firstStart)
    await keepDefaultKeys(db, config.DATA_DIR, firstStart, app.log)
    await ensureInitialOwner(db, config, app.log)
    app.decorate('setupToken', await keptSetupLink(db, config.DATA_DIR, app.log))

    const limits = traceLimitsOf(config)
    const rateLimiter = await createIngestRateLimiter(app, config, queueRedisTargetOf(config))
    const maskers = await createProjectMaskers(app, config)
    await app.register(sendTracesRoutes, { producer, limits, rateLimiter, maskers })
    await app.register(otlpGrpcPlugin, { producer, limits, rateLimiter, maskers })
    const sessionSecret = await consoleSessionSecret(config, app.log)
    const llmConnectionKey = await llmConnectionEncryptionKey(config, app.log)
    // A replica only makes sense beside a real Postgres (DATABASE_URL), never the embedded one.
    const readDb = config.DATABASE_READ_URL === undefined || config.DATABASE_URL === undefined ? undefined : createDb({ databaseUrl: config.DATABASE_READ_URL, poolSize: config.DATABASE_POOL_SIZE })
    if (readDb) app.addHook('onClose', async () => readDb.destroy())
    await app.register(controlPlaneRoutes, {
      readDb,
      adminApiKey: config.ADMIN_API_KEY,
      queryTimeoutMs: config.QUERY_TIMEOUT_MS,
      defaultIngestLimit: defaultIngestRateLimit(config),
      defaultMaskingRules: defaultMaskingRules(config),
      consoleSessions: { secret: sessionSecret, keyCacheTtlMs: config.KEY_CACHE_TTL_MS, userSessionIdleMs: config.SESSION_IDLE_HOURS * 3_600_000, userSessionMaxAgeMs: config.SESSION_MAX_HOURS * 3_600_000 },
      consoleKeySignIn: config.CONSOLE_KEY_SIGN_IN === 'true',
      llmConnectionKey: encryptionKeyOf(llmConnectionKey),
      experimentCallTimeoutMs: config.EXPERIMENT_CALL_TIMEOUT_MS,
      outbound,
      notifications: notificationSettingsOf(config),
      sso: ssoOptionsOf(config),
      signup: config.SIGNUP,
      onSetupDone: () => removeSetupToken(config.DATA_DIR),
    })
    // No CronJob calls `npm start`: it runs the cleanup itself on RETENTION_SCHEDULE (issue 46 §4).
    await app.register(cleanupRoutes, {
      cronApiKey: config.CRON_API_KEY, batchSize: config.CLEANUP_BATCH_SIZE, timeBudgetMs: config.CLEANUP_TIME_BUDGET_MS, lockTimeoutMs: config.CLEANUP_LOCK_TIMEOUT_MS, cutoffs: config.CLEANUP_CUTOFF, auditLogRetentionDays: config.AUDIT_LOG_RETENTION_DAYS,
      schedule: config.RETENTION_SCHEDULE,
    })
    await app.register(consoleAssetsPlugin, { distDir: deps.consoleDistDir })
    // The evaluator worker: BullMQ beside the span queue with REDIS_URL or REDIS_CLUSTER_NODES, in process without.
    await app.register(evaluatorPlugin, evaluatorOptionsFromSettings(config, queueRedisTargetOf(config), llmConnectionKey, outbound))
    await app.register(monitorsPlugin, monitorOptionsFromSettings(config))
    await app.register(notificationsPlugin, notificationOptionsFromSettings(config, llmConnectionKey, outbound))
    return { readiness: { queue: () => producer.ping(), evaluations: () => app.evaluator.ping() }, details: { summaries: () => summaryBacklog(db), cleanup: async () => cleanupDetails(config.CRON_API_KEY, config.RETENTION_SCHEDULE) } }
  },
})

export interface AllInOneApp {
  app: App
  /** The keys created on the very first start (empty database, no INIT_*), to print. */
  firstStart: DefaultWorkspace | null
  /** The setup link's token while no team has an owner. */
  setupToken: string | null
}

export async function buildAllInOneApp(config: AllInOneConfig, deps?: AllInOneDeps): Promise<AllInOneApp> {
  const app = await allInOneService.build(config, deps)
  return { app, firstStart: app.firstStart, setupToken: app.setupToken }
}

/** SESSION_SECRET, or the one kept in DATA_DIR (made on the first start): `npm start` always serves the console. */
async function consoleSessionSecret(config: AllInOneConfig, log: App['log']): Promise<string> {
  if (config.SESSION_SECRET !== undefined) return config.SESSION_SECRET
  const { secret, kept } = await keptSessionSecret(config.DATA_DIR)
  if (!kept) log.warn({ path: sessionSecretPath(config.DATA_DIR) }, 'could not keep a session secret: console sign-ins end when this process stops (set SESSION_SECRET)')
  return secret
}

/** LLM_CONNECTION_ENCRYPTION_KEY, or the one kept in DATA_DIR (made on the first start). */
async function llmConnectionEncryptionKey(config: AllInOneConfig, log: App['log']): Promise<string> {
  if (config.LLM_CONNECTION_ENCRYPTION_KEY !== undefined) return config.LLM_CONNECTION_ENCRYPTION_KEY
  const { key, kept } = await keptLlmConnectionKey(config.DATA_DIR)
  if (!kept) log.warn({ path: llmConnectionKeyPath(config.DATA_DIR) }, 'could not keep an LLM connection key: connections made now will not open after a restart (set LLM_CONNECTION_ENCRYPTION_KEY)')
  return key
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

/**
 * The setup link while no team has an owner: the one an earlier start kept while it is unused,
 * else a new one, kept for `npm run keys`; once there is an owner, the kept one is forgotten. As
 * with the keys file, failing to keep it does not stop the start.
 */
async function keptSetupLink(db: Db, dataDir: string, log: App['log']): Promise<string | null> {
  const kept = await readSetupToken(dataDir).catch(() => null)
  const token = await offerSetupLink(db, kept)
  try {
    if (token === null) await removeSetupToken(dataDir)
    else if (token !== kept) await saveSetupToken(dataDir, token)
  } catch (error) {
    log.warn({ err: error, dataDir }, 'could not keep the setup link for `npm run keys`')
  }
  return token
}
