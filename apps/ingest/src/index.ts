export { buildApp, traceLimitsOf, type IngestDeps } from './app.ts'
export {
  sendTracesRoutes,
  type SendTracesRoutesOptions,
  TraceAcceptedSchema,
  TraceErrorSchema,
  ExportTraceResponseSchema,
  RpcStatusSchema,
} from './routes/send-traces.routes.ts'
export type { TraceLimits } from './routes/trace-intake.ts'
export { otlpGrpcPlugin, type OtlpGrpcOptions, type OtlpGrpcReceiver } from './grpc/otlp-grpc.plugin.ts'
export { listenOtlpGrpcOrExit } from './grpc/listen-otlp-grpc.ts'
export { createIngestRateLimiter } from './rate-limit/create-ingest-rate-limiter.ts'
export { IngestRateLimiter, rateLimitHeaders } from './rate-limit/ingest-rate-limiter.ts'
export { createProjectMaskers } from './masking/create-project-maskers.ts'
