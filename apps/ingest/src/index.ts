export { buildApp, type IngestDeps } from './app.ts'
export {
  traceRoutes,
  type TraceRoutesOptions,
  TraceAcceptedSchema,
  TraceErrorSchema,
  ExportTraceResponseSchema,
  RpcStatusSchema,
} from './routes/trace.routes.ts'
export type { TraceLimits } from './routes/trace-intake.ts'
