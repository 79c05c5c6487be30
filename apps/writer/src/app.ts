import { spanLimitsOf, type WriterConfig } from '@tracewell/config'
import { summaryBacklog } from '@tracewell/db'
import type { App } from '@tracewell/http'
import { defineService, type ServiceDeps } from '@tracewell/service'
import { configureSpanLimits } from '@tracewell/otlp'
import { queueRedisTargetOf } from '@tracewell/queue'
import { spanBatchWorkerPlugin, workerOptionsFromSettings } from './span-batch-worker.plugin.ts'
import { dayPartitionsPlugin } from './day-partitions.plugin.ts'
import { summariserPlugin } from './summariser.plugin.ts'
import { erasureRunnerPlugin } from './erasure-runner.plugin.ts'

/**
 * The writer: no public API, only /healthz, /readyz and /metrics on its own small port, the
 * worker draining the span-batch queue into Postgres, the summariser folding what it stored
 * into the summaries, and the erasure requests' batches (docs/architecture.md).
 */
export const writerService = defineService<WriterConfig>({
  name: 'writer',
  migrations: 'check',
  async register(app, config) {
    // packages/config requires REDIS_URL or REDIS_CLUSTER_NODES of the writer.
    const redis = queueRedisTargetOf(config)
    if (!redis) throw new Error('the writer needs REDIS_URL or REDIS_CLUSTER_NODES')
    // As ingest applies them: what ingest counted is what the writer keeps.
    configureSpanLimits(spanLimitsOf(config))
    await app.register(spanBatchWorkerPlugin, workerOptionsFromSettings(config, redis))
    await app.register(summariserPlugin, config)
    await app.register(erasureRunnerPlugin, config)
    await app.register(dayPartitionsPlugin)
    return { readiness: { queue: () => app.spanBatchWorker.ping() }, details: { summaries: () => summaryBacklog(app.db), unwritableShards: () => app.spanBatchWorker.unwritableShards() } }
  },
})

export type WriterDeps = ServiceDeps

export const buildApp = (config: WriterConfig, deps?: WriterDeps): Promise<App> => writerService.build(config, deps)
