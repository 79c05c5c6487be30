import { spanLimitsOf, type IngestConfig } from '@tracewell/config'
import { configureSpanLimits } from '@tracewell/otlp'
import type { App } from '@tracewell/http'
import { defineService, type ServiceDeps } from '@tracewell/service'
import { createBullMqSpanBatchProducer, queueRedisTargetOf, type SpanBatchProducer } from '@tracewell/queue'
import { otlpGrpcPlugin } from './grpc/otlp-grpc.plugin.ts'
import { TraceDecodePool } from './body/trace-decode.pool.ts'
import { decodePoolMetrics } from './ingest.metrics.ts'
import { sendTracesRoutes } from './routes/send-traces.routes.ts'
import type { TraceLimits } from './routes/trace-intake.ts'
import { createIngestRateLimiter } from './rate-limit/create-ingest-rate-limiter.ts'
import { createProjectMaskers } from './masking/create-project-maskers.ts'

export interface IngestDeps extends ServiceDeps {
  /** The queue; by default a BullMQ producer on REDIS_URL or REDIS_CLUSTER_NODES, created and closed by the app. */
  producer?: SpanBatchProducer
}

/** The limits of one trace request, HTTP or gRPC, from the settings. */
export const traceLimitsOf = (config: Pick<IngestConfig, 'MAX_BODY_BYTES' | 'MAX_INFLATED_BYTES' | 'MAX_SPANS_PER_REQUEST' | 'MAX_JSON_VALUES' | 'MAX_PROTOBUF_FIELDS'>): TraceLimits => ({
  maxBodyBytes: config.MAX_BODY_BYTES,
  maxInflatedBytes: config.MAX_INFLATED_BYTES,
  maxSpansPerRequest: config.MAX_SPANS_PER_REQUEST,
  maxJsonValues: config.MAX_JSON_VALUES,
  maxProtobufFields: config.MAX_PROTOBUF_FIELDS,
})

/** The ingest service: trace routes over HTTP and OTLP/gRPC, plus health, metrics and docs. */
export const ingestService = defineService<IngestConfig, IngestDeps>({
  name: 'ingest',
  openApi: {
    title: 'Tracewell ingest',
    description: 'Receives traces from Langtrace SDKs and OpenTelemetry exporters and queues them for storage.',
    securitySchemes: ['apiKey'],
  },
  bodyLimit: (config) => config.MAX_BODY_BYTES,
  apiKeys: true,
  migrations: 'check',
  async register(app, config, deps) {
    const producer = deps.producer ?? createProducer(config, app)
    // onClose hooks run last-registered first: the gRPC receiver finishes its calls, then the
    // producer flushes its pending group commit, then the key usage is recorded and the pool closed.
    if (deps.producer === undefined) app.addHook('onClose', async () => producer.close())
    const limits = traceLimitsOf(config)
    configureSpanLimits(spanLimitsOf(config))
    const decodePool = config.DECODE_THREADS > 0 ? new TraceDecodePool(config.DECODE_THREADS, spanLimitsOf(config)) : undefined
    // Registered before the routes' hooks, so it closes after them: a request still decoding finishes first.
    if (decodePool) {
      decodePoolMetrics(app.metrics, decodePool)
      app.addHook('onClose', async () => decodePool.close())
    }
    const rateLimiter = await createIngestRateLimiter(app, config, queueRedisTargetOf(config))
    const maskers = await createProjectMaskers(app, config)
    await app.register(sendTracesRoutes, { producer, limits, rateLimiter, maskers, ...(decodePool ? { decodePool } : {}) })
    // It listens when server.ts (or a test) asks: building the app binds no port.
    await app.register(otlpGrpcPlugin, { producer, limits, rateLimiter, maskers, ...(decodePool ? { decodePool } : {}) })
    // Ready while some shard takes writes (a shard's master down turns away its projects only, and
    // taking every ingest out of the load balancer would turn away all); the others are named.
    const unwritableShards = producer.unwritableShards?.bind(producer)
    return {
      readiness: { queue: () => producer.ping() },
      ...(unwritableShards ? { details: { unwritableShards: async () => unwritableShards() } } : {}),
    }
  },
})

/** The BullMQ producer on REDIS_URL or REDIS_CLUSTER_NODES (packages/config requires one of them of ingest). */
function createProducer(config: IngestConfig, app: App): SpanBatchProducer {
  const redis = queueRedisTargetOf(config)
  if (!redis) throw new Error('ingest needs REDIS_URL or REDIS_CLUSTER_NODES')
  return createBullMqSpanBatchProducer({
    redis,
    prefix: config.QUEUE_PREFIX,
    shards: config.QUEUE_SHARDS,
    replicaAcks: config.QUEUE_REPLICA_ACKS,
    replicaTimeoutMs: config.QUEUE_REPLICA_TIMEOUT_MS,
    maxBacklogSpans: config.QUEUE_MAX_BACKLOG,
    maxBacklogBytes: config.QUEUE_MAX_BACKLOG_BYTES,
    maxSpansPerJob: config.ENQUEUE_MAX_SPANS_PER_JOB,
    lingerMs: config.ENQUEUE_LINGER_MS,
    lingerQuietMs: config.ENQUEUE_LINGER_QUIET_MS,
    logger: app.log,
  })
}

export const buildApp = (config: IngestConfig, deps?: IngestDeps): Promise<App> => ingestService.build(config, deps)
