import { Server, ServerCredentials, type Metadata, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js'
import { presentedApiKey, type CredentialHeaders } from '@tracewell/auth'
import { answerFailedKey, scopeRefusal, UnauthorizedError, verifyPresentedKey } from '@tracewell/http'
import type { SpanBatchProducer } from '@tracewell/queue'
import fp from 'fastify-plugin'
import { ingestMetrics, rejectionReasonOf } from '../ingest.metrics.ts'
import { encodeExportResponse, type PartialSuccess } from '../otlp/partial-success.ts'
import type { TraceDecodePool } from '../body/trace-decode.pool.ts'
import { acceptTraceBody, type TraceLimits } from '../routes/trace-intake.ts'
import { grpcErrorOf } from './grpc-status.ts'
import { DecodersBusyError, SpanRateLimitedError } from '../errors.ts'
import type { IngestRateLimiter } from '../rate-limit/ingest-rate-limiter.ts'
import type { ProjectMaskers } from '../masking/project-maskers.cache.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The OTLP/gRPC receiver; it listens once the process's server.ts asks it to. */
    otlpGrpc: OtlpGrpcReceiver
  }
}

export interface OtlpGrpcReceiver {
  /** Binds and starts serving; resolves with the port (the one chosen when asked for 0). */
  listen(address: { host: string; port: number }): Promise<number>
}

export interface OtlpGrpcOptions {
  producer: SpanBatchProducer
  limits: TraceLimits
  /** Where messages over 256 KiB are decoded (DECODE_THREADS); without one, in this thread. */
  decodePool?: TraceDecodePool
  /** Per-project rate limits: over one, RESOURCE_EXHAUSTED with a RetryInfo. */
  rateLimiter?: IngestRateLimiter
  /** Per-project masking rules, applied before a message is queued; none masks nothing. */
  maskers?: ProjectMaskers
}

/** The method's full name, as exporters call it and as the metrics' `route` label shows it. */
const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export'

/**
 * opentelemetry/proto/collector/trace/v1/trace_service.proto's one method. The request stays in
 * its bytes (the same protobuf decoder as OTLP/HTTP reads it) and the answer is encoded by hand,
 * so no .proto is loaded at run time.
 */
const traceService: ServiceDefinition = {
  Export: {
    path: EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: (body: Buffer) => body,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (partial: PartialSuccess | null) => encodeExportResponse(partial),
    responseDeserialize: (bytes: Buffer) => bytes,
  },
}

// Closing waits this long for calls in progress (their spans are on the way into the queue) before
// cutting the connections that are left.
const DRAIN_MS = 10_000

/**
 * OTLP/gRPC on GRPC_PORT (4317 by default): the same key check, limits, decoding, admission
 * control, partial success and metrics as POST /v1/traces, through the same `acceptTraceBody`.
 * gRPC's own compression (gzip, deflate) is undone by @grpc/grpc-js, which also refuses a message
 * larger than MAX_INFLATED_BYTES once decompressed.
 */
export const otlpGrpcPlugin = fp<OtlpGrpcOptions>(
  async (app, options) => {
    const metrics = ingestMetrics(app.metrics, options.producer)
    const intake = { ...options, metrics }
    const server = new Server({ 'grpc.max_receive_message_length': options.limits.maxInflatedBytes })
    let listening = false

    async function exportSpans(call: ServerUnaryCall<Buffer, PartialSuccess | null>): Promise<PartialSuccess | null> {
      const presented = presentedApiKey(credentialHeaders(call.metadata))
      if (presented === undefined) throw new UnauthorizedError('Invalid API key')
      const key = await verifyPresentedKey(app, presented)
      // An unknown key's answer waits its turn, per client address, as on HTTP (answerFailedKey).
      if (key === null) await answerFailedKey(app, peerAddress(call.getPeer()))
      // A team key is the wrong kind for ingest, which makes it an invalid key here.
      if (!key || key.kind !== 'project' || key.projectId === null) throw new UnauthorizedError('Invalid API key')
      // A key without the ingest scope (a read-only key) may not send, as on HTTP.
      const refusal = scopeRefusal(key, 'traces:ingest')
      if (refusal) throw refusal
      // A project whose bucket cannot hold a span yet is refused before its message is decoded.
      const early = options.rateLimiter?.refusedEarly(key.projectId)
      if (early) throw early
      const accepted = await acceptTraceBody(intake, key.projectId, 'protobuf', call.request)
      return accepted.partialSuccess
    }

    server.addService(traceService, {
      Export(call: ServerUnaryCall<Buffer, PartialSuccess | null>, callback: sendUnaryData<PartialSuccess | null>) {
        exportSpans(call).then(
          (partial) => {
            metrics.request(EXPORT_PATH, 'protobuf', 'accepted')
            callback(null, partial)
          },
          (error: Error & { statusCode?: number; retryAfterSeconds?: number }) => {
            const statusCode = error.statusCode ?? 500
            if (statusCode >= 500) app.log.warn({ err: error }, 'OTLP/gRPC export refused')
            metrics.request(EXPORT_PATH, 'protobuf', rejectionReasonOf(statusCode, error instanceof SpanRateLimitedError, error instanceof DecodersBusyError) ?? 'internal')
            callback(grpcErrorOf(error))
          },
        )
      },
    })

    app.decorate('otlpGrpc', {
      listen: ({ host, port }) =>
        new Promise<number>((resolve, reject) => {
          server.bindAsync(hostPort(host, port), ServerCredentials.createInsecure(), (error, boundPort) => {
            if (error) return reject(new Error(`OTLP/gRPC cannot listen on ${hostPort(host, port)} (GRPC_PORT): ${error.message}`))
            listening = true
            app.log.info({ port: boundPort }, 'OTLP/gRPC receiver listening')
            resolve(boundPort)
          })
        }),
    })

    // Registered after the trace routes, so this runs before the producer is closed: a call
    // accepted while closing still gets its spans into the queue and its answer.
    app.addHook('onClose', async () => {
      if (!listening) return server.forceShutdown()
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.forceShutdown(), DRAIN_MS)
        server.tryShutdown(() => {
          clearTimeout(cut)
          resolve()
        })
      })
    })
  },
  { name: 'otlp-grpc', dependencies: ['api-keys', 'metrics'] },
)

/** gRPC metadata as the header object `presentedApiKey` reads (x-api-key, authorization). */
function credentialHeaders(metadata: Metadata): CredentialHeaders {
  const text = (key: string) => {
    const value = metadata.get(key)[0]
    return typeof value === 'string' ? value : undefined
  }
  return { 'x-api-key': text('x-api-key'), authorization: text('authorization') }
}

/** host:port, with an IPv6 host in brackets. */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

/** The address of a gRPC peer such as `ipv4:127.0.0.1:51234` or `ipv6:[::1]:51234`. */
function peerAddress(peer: string): string {
  const address = peer.replace(/^ipv[46]:/, '')
  const bracket = /^\[([^\]]+)\]/.exec(address)
  if (bracket) return bracket[1] as string
  const colon = address.lastIndexOf(':')
  return colon === -1 ? address : address.slice(0, colon)
}
