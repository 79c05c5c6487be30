import { assertSchemaIsCurrent, createDb, migrateToLatest, type Db } from '@tracewell/db'
import {
  apiKeysPlugin,
  authPlugin,
  createApp,
  healthPlugin,
  installErrorHandler,
  installResponseHeaders,
  messageBody,
  metricsPlugin,
  openApiPlugin,
  trustProxyOf,
  type App,
  type OpenApiOptions,
  type ReadinessCheck,
} from '@tracewell/http'
import { apiKeyStore, postgresFailures } from './database-kit.ts'
import { databaseAnswers, dbPlugin } from './db.plugin.ts'

/** The settings every service reads (packages/config composes them into each service's schema). */
export interface ServiceConfig {
  LOG_LEVEL: string
  BODY_TIMEOUT_MS?: number
  TRUST_PROXY?: string
  DATABASE_URL?: string
  DATABASE_POOL_SIZE: number
  DATA_DIR?: string
  KEY_CACHE_TTL_MS?: number
  KEY_OUTAGE_GRACE_MS?: number
}

/** What a caller may hand a service instead of letting it make its own. */
export interface ServiceDeps {
  /** A database owned by the caller: the app does not close it unless `closeDb` says so. */
  db?: Db
  /** Whether closing the app closes `db` (default: only when the app opened it). */
  closeDb?: boolean
  /** Tests pass `false` for quiet output. */
  logger?: boolean
}

/** What a service's own part adds to the kit's: the dependencies /readyz must see answer, and what else it reports. */
export interface ServiceParts {
  readiness?: Record<string, ReadinessCheck>
  /** Figures /readyz shows beside its checks, by name, without deciding readiness (e.g. the summaries' lag). */
  details?: Record<string, ReadinessCheck>
}

export interface ServiceSpec<C extends ServiceConfig, D extends ServiceDeps> {
  /** As in logs, start-up errors and docs: ingest, writer, control-plane, janitor, all-in-one. */
  name: string
  /** The OpenAPI document's title, description and credentials (from the settings, where routes depend on them); a service without a public API has none. */
  openApi?: OpenApiOptions | ((config: C) => OpenApiOptions)
  /** Largest request body, in bytes (Fastify's 1 MiB otherwise). */
  bodyLimit?(config: C): number
  /** Whether routes check API keys (the cached verifier at `app.apiKeys`, `requireKey` hooks filling `request.apiKey`). */
  apiKeys?: boolean
  /** 'check': building on its own database fails with a MigrationError when that is behind; 'apply': it migrates (npm start). */
  migrations: 'check' | 'apply'
  /** The service's own plugins and routes, registered after the kit's and before /readyz. */
  register(app: App, config: C, deps: D): Promise<ServiceParts | void>
}

export interface Service<C extends ServiceConfig, D extends ServiceDeps> {
  readonly spec: ServiceSpec<C, D>
  /** The app, ready to listen: what server.ts runs and what tests `inject()` into. */
  build(config: C, deps?: D): Promise<App>
}

/**
 * One way to be a Tracewell service. Every service is built in the same order: logging and
 * request ids, the error handler, the default response headers (nosniff, no-store), metrics, the OpenAPI document, the database (closed with the
 * app when the app opened it) and its schema check, the API key verifier, then the service's own part, then
 * /healthz and /readyz over Postgres and whatever the service's part depends on. Closing runs the
 * same hooks in reverse, so a service's own resources (queue, worker, receivers) are done before
 * the key verifier and the pool go.
 */
export function defineService<C extends ServiceConfig, D extends ServiceDeps = ServiceDeps>(spec: ServiceSpec<C, D>): Service<C, D> {
  return {
    spec,
    async build(config, deps = {} as D) {
      const app = createApp({
        logLevel: config.LOG_LEVEL,
        bodyLimit: spec.bodyLimit?.(config),
        requestTimeoutMs: config.BODY_TIMEOUT_MS,
        trustProxy: trustProxyOf(config.TRUST_PROXY),
        databaseFailures: postgresFailures,
        ...(deps.logger === undefined ? {} : { logger: deps.logger }),
      })
      installErrorHandler(app, messageBody)
      installResponseHeaders(app)
      await app.register(metricsPlugin)
      if (spec.openApi) await app.register(openApiPlugin, typeof spec.openApi === 'function' ? spec.openApi(config) : spec.openApi)
      const db = deps.db ?? createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, dataDir: config.DATA_DIR })
      await app.register(dbPlugin, { db, closeOnShutdown: deps.closeDb ?? deps.db === undefined })
      // Before the service's part reads a table (the control plane's bootstrap writes some): a
      // service on an outdated schema would fail on its first new column, the writer on every
      // insert. The all-in-one process brings its own schema up to date instead. A database
      // handed in is the caller's to have migrated (tests bring one cloned from a migrated
      // template, some of them unreachable on purpose).
      // Said as it happens: on a first start (the embedded database on a slow disk) this is most
      // of the time before the server listens, which was otherwise silent.
      if (spec.migrations === 'apply') {
        app.log.info('checking the database schema')
        const applied = await migrateToLatest(db, (migration) => app.log.info({ migration }, `applying database migration ${migration}`))
        if (applied.length > 0) app.log.info({ applied: applied.length }, 'database schema up to date')
      }
      else if (deps.db === undefined) await assertSchemaIsCurrent(db)
      if (spec.apiKeys) {
        await app.register(apiKeysPlugin, { store: apiKeyStore(db), ttlMs: config.KEY_CACHE_TTL_MS ?? 5_000, outageGraceMs: config.KEY_OUTAGE_GRACE_MS ?? 15 * 60_000 })
        await app.register(authPlugin)
      }
      const parts = (await spec.register(app, config, deps)) ?? {}
      await app.register(healthPlugin, { readinessChecks: { postgres: databaseAnswers(db), ...parts.readiness }, details: parts.details })
      return app
    },
  }
}
