import type { WriterConfig } from '@tracewell/config'
import type { QueueRedisTarget } from '@tracewell/queue'
import fp from 'fastify-plugin'
import { startSpanBatchWorker, type SpanBatchWorker } from './span-batch.worker.ts'

declare module 'fastify' {
  interface FastifyInstance {
    spanBatchWorker: SpanBatchWorker
  }
}

export interface SpanBatchWorkerPluginOptions {
  redis: QueueRedisTarget | string
  prefix: string
  shards: number
  replicaAcks: number
  replicaTimeoutMs: number
  concurrency: number
  maxBodyBytes: number
  lingerMs?: number
  maxAttempts: number
  lockDurationMs?: number
  stalledIntervalMs?: number
}

type WorkerSettings = Pick<WriterConfig, 'QUEUE_PREFIX' | 'QUEUE_SHARDS' | 'QUEUE_REPLICA_ACKS' | 'QUEUE_REPLICA_TIMEOUT_MS' | 'WRITER_CONCURRENCY' | 'WRITER_MAX_BODY_BYTES' | 'WRITER_LINGER_MS' | 'WRITER_MAX_ATTEMPTS' | 'WRITER_LOCK_DURATION_MS' | 'WRITER_STALLED_INTERVAL_MS'>

/** The worker's options from the settings, shared by the writer service and `npm start`. */
export function workerOptionsFromSettings(settings: WorkerSettings, redis: QueueRedisTarget): SpanBatchWorkerPluginOptions {
  return {
    redis,
    prefix: settings.QUEUE_PREFIX,
    shards: settings.QUEUE_SHARDS,
    replicaAcks: settings.QUEUE_REPLICA_ACKS,
    replicaTimeoutMs: settings.QUEUE_REPLICA_TIMEOUT_MS,
    concurrency: settings.WRITER_CONCURRENCY,
    maxBodyBytes: settings.WRITER_MAX_BODY_BYTES,
    lingerMs: settings.WRITER_LINGER_MS,
    maxAttempts: settings.WRITER_MAX_ATTEMPTS,
    lockDurationMs: settings.WRITER_LOCK_DURATION_MS,
    stalledIntervalMs: settings.WRITER_STALLED_INTERVAL_MS,
  }
}

/**
 * Runs the span-batch worker inside an app, on `app.db`, with its metrics in `app.metrics`.
 * Registered after the db plugin, so on close (hooks run in reverse order of registration) the
 * worker stops and finishes its active jobs before the database pool is closed.
 */
export const spanBatchWorkerPlugin = fp<SpanBatchWorkerPluginOptions>(
  async (app, options) => {
    const worker = startSpanBatchWorker({ ...options, db: app.db, logger: app.log, metrics: app.metrics })
    app.decorate('spanBatchWorker', worker)
    app.addHook('onClose', async () => worker.close())
  },
  { name: 'span-batch-worker', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
