import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import { installErrorHandler, statusAndMessageBody, type App } from '@tracewell/http'
import type { SpanBatchProducer } from '@tracewell/queue'
import type { FastifyPluginAsync, FastifyReply, RawServerDefault } from 'fastify'
import { formatOf } from '../body/media-type.ts'
import { ingestMetrics } from '../ingest.metrics.ts'
import { encodeStatus, grpcCodeFor } from '../otlp/otlp-status.ts'
import { encodeExportResponse } from '../otlp/partial-success.ts'
import type { TraceDecodePool } from '../body/trace-decode.pool.ts'
import { installTraceIntake, type AcceptedTraceBody, type TraceLimits } from './trace-intake.ts'
import { rateLimitHeaders, type IngestRateLimiter } from '../rate-limit/ingest-rate-limiter.ts'
import type { ProjectMaskers } from '../masking/project-maskers.cache.ts'

export interface SendTracesRoutesOptions {
  producer: SpanBatchProducer
  limits: TraceLimits
  /** Where bodies over 256 KiB are decoded (DECODE_THREADS); without one, in this thread. */
  decodePool?: TraceDecodePool
  /** Per-project rate limits (429 with Retry-After and RateLimit-* fields); none limits nothing. */
  rateLimiter?: IngestRateLimiter
  /** Per-project masking rules, applied before a body is queued; none masks nothing. */
  maskers?: ProjectMaskers
}

export const TraceHeadersSchema = Type.Object({
  'x-api-key': Type.Optional(Type.String({ description: 'a project API key' })),
  'content-type': Type.Optional(Type.String({ description: 'application/json, application/x-protobuf or application/protobuf' })),
  'content-encoding': Type.Optional(Type.String({ description: 'gzip, deflate or identity' })),
})
export type TraceHeaders = Static<typeof TraceHeadersSchema>

export const TraceAcceptedSchema = Type.Object({
  status: Type.Literal(200),
  message: Type.Literal('Traces received successfully'),
  rejectedSpans: Type.Optional(Type.Integer({ description: 'invalid spans refused while the others were accepted (partial success); absent when none were' })),
  errorMessage: Type.Optional(Type.String({ description: 'how many spans were refused and the first problems, each with its path in the body' })),
})
export type TraceAccepted = Static<typeof TraceAcceptedSchema>

export const TraceErrorSchema = Type.Object({ status: Type.Integer(), message: Type.String() })
export type TraceError = Static<typeof TraceErrorSchema>

/** ExportTraceServiceResponse in its JSON form; `partialSuccess` stays unset on full success. */
export const ExportTraceResponseSchema = Type.Object({
  partialSuccess: Type.Optional(Type.Object({ rejectedSpans: Type.Optional(Type.String()), errorMessage: Type.Optional(Type.String()) })),
})
export type ExportTraceResponse = Static<typeof ExportTraceResponseSchema>

/** google.rpc.Status in its JSON form. */
export const RpcStatusSchema = Type.Object({ code: Type.Integer(), message: Type.String() })
export type RpcStatus = Static<typeof RpcStatusSchema>

const errorStatuses = [400, 401, 413, 415, 429, 500, 503] as const
const responses = <T, E>(ok: T, error: E) => ({ 200: ok, ...Object.fromEntries(errorStatuses.map((status) => [status, error])) })

const TRACES_ACCEPTED: TraceAccepted = { status: 200, message: 'Traces received successfully' }
const EXPORT_ACCEPTED: ExportTraceResponse = {}

/**
 * A protobuf request is answered in protobuf, whatever the route (OTLP/HTTP: the response's
 * Content-Type is the request's): success as an ExportTraceServiceResponse, here, and errors as a
 * google.rpc.Status, by `protobufErrors`. Exporters pointed at /api/trace decode it too.
 */
function sendProtobufAnswer(reply: FastifyReply, accepted: AcceptedTraceBody): FastifyReply {
  // Bytes bypass the JSON serializer; the route's schema describes the JSON form of the same message.
  return reply.code(200).type('application/x-protobuf').send(encodeExportResponse(accepted.partialSuccess) as never)
}

/** Re-encodes the JSON error body `toStatus` reads as a google.rpc.Status for protobuf requests. */
function protobufErrors(app: App, toStatus: (body: Record<string, unknown>, statusCode: number) => RpcStatus): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode < 400 || formatOf(request.headers['content-type']) !== 'protobuf' || typeof payload !== 'string') {
      done(null, payload)
      return
    }
    const status = toStatus(JSON.parse(payload) as Record<string, unknown>, reply.statusCode)
    void reply.type('application/x-protobuf')
    done(null, encodeStatus(status))
  })
}

/**
 * POST /api/trace and POST /v1/traces (docs/api.md#send-traces). Each lives in a context of its own, because
 * they answer errors in different shapes: the Langtrace JSON body, or OTLP's google.rpc.Status.
 * Everything else (auth, limits, decoding, queueing, metrics) is the same code.
 */
export const sendTracesRoutes: FastifyPluginAsync<SendTracesRoutesOptions, RawServerDefault, TypeBoxTypeProvider> = async (app, options) => {
  const metrics = ingestMetrics(app.metrics, options.producer)
  const routeOptions = {
    bodyLimit: options.limits.maxBodyBytes,
    // Success is the common case and already counted in /metrics: at the default level, no info
    // line per request. A quieter (or a debugging) level is left as configured.
    ...(app.log.level === 'info' ? { logLevel: 'warn' as const } : {}),
  }

  await app.register(async (api: App) => {
    installErrorHandler(api, statusAndMessageBody)
    protobufErrors(api, (body, statusCode) => ({ code: grpcCodeFor(statusCode), message: String(body.message) }))
    const acceptTraces = installTraceIntake(api, { ...options, metrics })
    api.post(
      '/api/trace',
      {
        ...routeOptions,
        schema: {
          operationId: 'sendTraces',
          summary: 'Send traces',
          description:
            'OTLP JSON (map or list attributes), OTLP protobuf ExportTraceServiceRequest, or a Langtrace SDK span array; optionally gzip/deflate. Answers 200 once the valid spans are in the queue, with the count and first problems of invalid spans refused one by one (partial success); 400 when none is valid. A protobuf request is answered in protobuf (ExportTraceServiceResponse, or google.rpc.Status on failure).',
          security: [{ apiKey: [] }],
          headers: TraceHeadersSchema,
          response: responses(TraceAcceptedSchema, TraceErrorSchema),
        },
      },
      async (request, reply) => {
        const accepted = await acceptTraces(request)
        if (accepted.rateLimit) void reply.headers(rateLimitHeaders(accepted.rateLimit))
        if (accepted.format === 'otlp-protobuf') return sendProtobufAnswer(reply, accepted)
        const partial = accepted.partialSuccess
        return reply.code(200).send(partial === null ? TRACES_ACCEPTED : { ...TRACES_ACCEPTED, rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage })
      },
    )
  })

  await app.register(async (otlp: App) => {
    // One handler shapes every error as a JSON Status; a protobuf request gets it re-encoded below.
    installErrorHandler(otlp, (statusCode, message) => ({ code: grpcCodeFor(statusCode), message }))
    protobufErrors(otlp, (body) => body as RpcStatus)
    const acceptTraces = installTraceIntake(otlp, { ...options, metrics })
    // The standard path, and the one Langfuse's OpenTelemetry exporter posts to (its base URL plus
    // /api/public/otel/v1/traces, the project key as its Basic auth password), so that it can be
    // pointed at Tracewell unchanged.
    for (const [path, operationId, summary] of [
      ['/v1/traces', 'exportTraces', 'Send traces (OTLP/HTTP)'],
      ['/api/public/otel/v1/traces', 'exportTracesLangfusePath', 'Send traces (OTLP/HTTP) on the path of Langfuse’s OpenTelemetry exporter'],
    ] as const) {
      otlp.post(
        path,
        {
          ...routeOptions,
          schema: {
            operationId,
            summary,
            description:
              'The standard OTLP/HTTP path. Answers in the encoding of the request: an ExportTraceServiceResponse on success (with partialSuccess when invalid spans were refused one by one), a google.rpc.Status on failure (protobuf for protobuf requests, JSON otherwise).',
            security: [{ apiKey: [] }],
            headers: TraceHeadersSchema,
            response: responses(ExportTraceResponseSchema, RpcStatusSchema),
          },
        },
        async (request, reply) => {
          const accepted = await acceptTraces(request)
          if (accepted.rateLimit) void reply.headers(rateLimitHeaders(accepted.rateLimit))
          if (accepted.format === 'otlp-protobuf') return sendProtobufAnswer(reply, accepted)
          const partial = accepted.partialSuccess
          // int64 in the protobuf JSON mapping is a decimal string, as the Collector sends it.
          return reply.code(200).send(partial === null ? EXPORT_ACCEPTED : { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } })
        },
      )
    }
  })
}
