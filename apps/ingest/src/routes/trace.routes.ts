import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import { installErrorHandler, statusAndMessageBody, type App } from '@tracewell/http'
import type { SpanBatchProducer } from '@tracewell/queue'
import type { FastifyPluginAsync, RawServerDefault } from 'fastify'
import { formatOf } from '../body/media-type.ts'
import { ingestMetrics } from '../ingest.metrics.ts'
import { EMPTY_EXPORT_RESPONSE, encodeStatus, grpcCodeFor } from '../otlp/otlp-status.ts'
import { installTraceIntake, type TraceLimits } from './trace-intake.ts'

export interface TraceRoutesOptions {
  producer: SpanBatchProducer
  limits: TraceLimits
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
 * POST /api/trace and POST /v1/traces (docs/api.md#send-traces). Each lives in a context of its own, because
 * they answer errors in different shapes: the Langtrace JSON body, or OTLP's google.rpc.Status.
 * Everything else (auth, limits, decoding, queueing, metrics) is the same code.
 */
export const traceRoutes: FastifyPluginAsync<TraceRoutesOptions, RawServerDefault, TypeBoxTypeProvider> = async (app, options) => {
  const metrics = ingestMetrics(app.metrics, options.producer)
  const routeOptions = {
    bodyLimit: options.limits.maxBodyBytes,
    // Success is the common case and already counted in /metrics: at the default level, no info
    // line per request. A quieter (or a debugging) level is left as configured.
    ...(app.log.level === 'info' ? { logLevel: 'warn' as const } : {}),
  }

  await app.register(async (api: App) => {
    installErrorHandler(api, statusAndMessageBody)
    const acceptTraces = installTraceIntake(api, { ...options, metrics })
    api.post(
      '/api/trace',
      {
        ...routeOptions,
        schema: {
          summary: 'Send traces',
          description:
            'OTLP JSON (map or list attributes), OTLP protobuf ExportTraceServiceRequest, or a Langtrace SDK span array; optionally gzip/deflate. Answers 200 once the spans are in the queue.',
          security: [{ apiKey: [] }],
          headers: TraceHeadersSchema,
          response: responses(TraceAcceptedSchema, TraceErrorSchema),
        },
      },
      async (request, reply) => {
        await acceptTraces(request)
        return reply.code(200).send(TRACES_ACCEPTED)
      },
    )
  })

  await app.register(async (otlp: App) => {
    // One handler shapes every error as a JSON Status; a protobuf request gets it re-encoded below.
    installErrorHandler(otlp, (statusCode, message) => ({ code: grpcCodeFor(statusCode), message }))
    const acceptTraces = installTraceIntake(otlp, { ...options, metrics })
    otlp.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode < 400 || formatOf(request.headers['content-type']) !== 'protobuf' || typeof payload !== 'string') {
        done(null, payload)
        return
      }
      const status = JSON.parse(payload) as RpcStatus
      void reply.type('application/x-protobuf')
      done(null, encodeStatus(status))
    })
    otlp.post(
      '/v1/traces',
      {
        ...routeOptions,
        schema: {
          summary: 'Send traces (OTLP/HTTP)',
          description:
            'The standard OTLP/HTTP path. Answers in the encoding of the request: an ExportTraceServiceResponse on success, a google.rpc.Status on failure (protobuf for protobuf requests, JSON otherwise).',
          security: [{ apiKey: [] }],
          headers: TraceHeadersSchema,
          response: responses(ExportTraceResponseSchema, RpcStatusSchema),
        },
      },
      async (request, reply) => {
        const format = await acceptTraces(request)
        // Bytes bypass the JSON serializer; the schema describes the JSON form of the same message.
        if (format === 'otlp-protobuf') return reply.code(200).type('application/x-protobuf').send(EMPTY_EXPORT_RESPONSE as ExportTraceResponse)
        return reply.code(200).send(EXPORT_ACCEPTED)
      },
    )
  })
}
