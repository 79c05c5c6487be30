import type { AllInOneConfig } from '@tracewell/config'
import type { Db } from '@tracewell/db'
import type { App } from '@tracewell/http'
import { createBullMqSpanBatchProducer, createInProcessSpanBatchProducer, queueRedisTargetOf, type SpanBatchProducer } from '@tracewell/queue'
import { SpanPricer, spanBatchWorkerPlugin, dayPartitionsPlugin, inProcessSpanBatchProcessor, summariserPlugin, erasureRunnerPlugin, workerOptionsFromSettings } from '@tracewell/writer'

/**
 * The queue between the ingest routes and the writer, inside one process. With REDIS_URL (or REDIS_CLUSTER_NODES) it is
 * the BullMQ queue and worker of the separate services; without it the in-process producer hands
 * each group-committed batch straight to the same writer processor, so a 200 still means stored
 * (and summarised: inProcessSpanBatchProcessor folds before it answers). The summariser runs either way; in
 * process it folds what a failed fold left.
 */
export async function registerSpanPipeline(app: App, config: AllInOneConfig, db: Db): Promise<SpanBatchProducer> {
  const limits = { maxSpansPerJob: config.ENQUEUE_MAX_SPANS_PER_JOB, maxBacklogSpans: config.QUEUE_MAX_BACKLOG }
  await app.register(summariserPlugin, config)
  await app.register(erasureRunnerPlugin, config)
  await app.register(dayPartitionsPlugin)
  const redis = queueRedisTargetOf(config)
  if (!redis) {
    const process = inProcessSpanBatchProcessor(db, new SpanPricer({ db, metrics: app.metrics, logger: app.log }))
    return createInProcessSpanBatchProducer({ ...limits, process: async (batches) => void (await process(batches)) })
  }
  await app.register(spanBatchWorkerPlugin, workerOptionsFromSettings(config, redis))
  return createBullMqSpanBatchProducer({
    ...limits,
    maxBacklogBytes: config.QUEUE_MAX_BACKLOG_BYTES,
    redis,
    prefix: config.QUEUE_PREFIX,
    shards: config.QUEUE_SHARDS,
    replicaAcks: config.QUEUE_REPLICA_ACKS,
    replicaTimeoutMs: config.QUEUE_REPLICA_TIMEOUT_MS,
    lingerMs: config.ENQUEUE_LINGER_MS,
    lingerQuietMs: config.ENQUEUE_LINGER_QUIET_MS,
    logger: app.log,
  })
}
