import type { IngestConfig } from '@tracewell/config'
import { createDb, type Db } from '@tracewell/db'
import { apiKeysPlugin, createApp, databaseAnswers, dbPlugin, healthPlugin, metricsPlugin, openApiPlugin, type App } from '@tracewell/http'
import { createBullMqSpanBatchProducer, type SpanBatchProducer } from '@tracewell/queue'
import { otlpGrpcPlugin } from './grpc/otlp-grpc.plugin.ts'
import { sendTracesRoutes } from './routes/send-traces.routes.ts'

export interface IngestDeps {
  /** The queue; by default a BullMQ producer on REDIS_URL, created and closed by the app. */
  producer?: SpanBatchProducer
  /** The database (for API keys); by default a pool on DATABASE_URL, created and closed by the app. */
  db?: Db
}

/** The ingest service: trace routes over HTTP and OTLP/gRPC, plus health, metrics and docs. */
export async function buildApp(config: IngestConfig, deps: IngestDeps = {}): Promise<App> {
  const app = createApp({ logLevel: config.LOG_LEVEL, bodyLimit: config.MAX_BODY_BYTES })
  const db = deps.db ?? createDb({ databaseUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE })
  const producer =
    deps.producer ??
    createBullMqSpanBatchProducer({
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      maxBacklogSpans: config.QUEUE_MAX_BACKLOG,
      maxBacklogBytes: config.QUEUE_MAX_BACKLOG_BYTES,
      maxSpansPerJob: config.ENQUEUE_MAX_SPANS_PER_JOB,
      logger: app.log,
    })

  await app.register(metricsPlugin)
  await app.register(healthPlugin, { readinessChecks: { postgres: databaseAnswers(db), queue: () => producer.ping() } })
  await app.register(openApiPlugin, {
    title: 'Tracewell ingest',
    description: 'Receives traces from Langtrace SDKs and OpenTelemetry exporters and queues them for storage.',
  })
  await app.register(dbPlugin, { db, closeOnShutdown: deps.db === undefined })
  await app.register(apiKeysPlugin, { ttlMs: config.KEY_CACHE_TTL_MS, outageGraceMs: config.KEY_OUTAGE_GRACE_MS })
  // onClose hooks run last-registered first: the producer flushes its pending group commit
  // before the key usage is recorded and the pool is closed.
  if (deps.producer === undefined) app.addHook('onClose', async () => producer.close())
  const limits = {
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxInflatedBytes: config.MAX_INFLATED_BYTES,
    maxSpansPerRequest: config.MAX_SPANS_PER_REQUEST,
    maxJsonValues: config.MAX_JSON_VALUES,
  }
  await app.register(sendTracesRoutes, { producer, limits })
  // It listens when server.ts (or a test) asks: building the app binds no port.
  await app.register(otlpGrpcPlugin, { producer, limits })
  return app
}
