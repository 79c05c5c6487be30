import type { TObject } from '@sinclair/typebox'
import { loadConfigOrExit, waitForDependenciesOrExit, type StartupDependency } from '@tracewell/config'
import { MigrationError, postgresDependency } from '@tracewell/db'
import { runServer, type App } from '@tracewell/http'
import { redisClusterDependency, redisDependency } from './redis-dependency.ts'
import { releaseStartupGarbage } from './release-startup-garbage.ts'
import type { Service, ServiceConfig, ServiceDeps } from './define-service.ts'

interface ListeningConfig extends ServiceConfig {
  HOST: string
  PORT: number
  STARTUP_RETRY_SECONDS: number
  REDIS_URL?: string
  REDIS_CLUSTER_NODES?: string
  REDIS_CLUSTER_PASSWORD?: string
}

export interface RunServiceOptions<C> {
  /** Runs once the settings are read, before anything slow: what the process is about to do. */
  starting?(config: C): void
  /** Runs before the HTTP server listens: other listeners (OTLP/gRPC), so that once /readyz answers they all do. */
  beforeListen?(app: App, config: C): Promise<void> | void
  /** Runs once the HTTP server listens: start-up messages. */
  afterListen?(app: App, config: C): Promise<void> | void
}

/**
 * A service's server.ts in one call: reads and checks its settings (exit 78 naming the first bad
 * one), waits for the Postgres and Redis it is configured with (exit 1 after
 * STARTUP_RETRY_SECONDS), builds the app (which refuses a database whose schema is behind: exit 1,
 * saying to run `npm run migrate`), returns start-up's garbage to the system, listens, and closes
 * gracefully on SIGINT/SIGTERM.
 */
export async function runService<C extends ListeningConfig>(service: Service<C, ServiceDeps>, configSchema: TObject, options: RunServiceOptions<C> = {}): Promise<App> {
  const config = loadConfigOrExit(configSchema) as unknown as C
  options.starting?.(config)
  await waitForDependenciesOrExit(dependenciesOf(config), { retrySeconds: config.STARTUP_RETRY_SECONDS })
  const app = await buildOrExit(service, config)
  await options.beforeListen?.(app, config)
  await runServer(app, { host: config.HOST, port: config.PORT })
  await options.afterListen?.(app, config)
  releaseStartupGarbage()
  return app
}

/** What the settings point at; unset URLs mean the embedded database or in-process queue. */
function dependenciesOf(config: ListeningConfig): StartupDependency[] {
  return [
    ...(config.DATABASE_URL ? [postgresDependency(config.DATABASE_URL)] : []),
    ...(config.REDIS_URL ? [redisDependency(config.REDIS_URL)] : []),
    ...(config.REDIS_CLUSTER_NODES ? [redisClusterDependency(config.REDIS_CLUSTER_NODES, config.REDIS_CLUSTER_PASSWORD)] : []),
  ]
}

/** The app, ready; a database whose schema is behind stops the process with one line saying what to run. */
async function buildOrExit<C extends ListeningConfig>(service: Service<C, ServiceDeps>, config: C): Promise<App> {
  try {
    const app = await service.build(config)
    await app.ready()
    return app
  } catch (error) {
    if (!(error instanceof MigrationError)) throw error
    process.stderr.write(`${service.spec.name} cannot start: ${error.message}\n`)
    process.exit(1)
  }
}
