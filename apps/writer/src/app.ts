import type { WriterConfig } from '@tracewell/config'
import { defineService, type App, type ServiceDeps } from '@tracewell/http'
import { spanBatchWorkerPlugin, workerOptionsFromSettings } from './span-batch-worker.plugin.ts'

/**
 * The writer: no public API, only /healthz, /readyz and /metrics on its own small port, and the
 * worker draining the span-batch queue into Postgres (docs/architecture.md).
 */
export const writerService = defineService<WriterConfig>({
  name: 'writer',
  migrations: 'check',
  async register(app, config) {
    await app.register(spanBatchWorkerPlugin, workerOptionsFromSettings(config, config.REDIS_URL))
    return { readiness: { queue: () => app.spanBatchWorker.ping() } }
  },
})

export type WriterDeps = ServiceDeps

export const buildApp = (config: WriterConfig, deps?: WriterDeps): Promise<App> => writerService.build(config, deps)
