import { IngestConfigSchema } from '@tracewell/config'
import { runService } from '@tracewell/service'
import { ingestService } from './app.ts'
import { listenOtlpGrpcOrExit } from './grpc/listen-otlp-grpc.ts'

// `npm run start:ingest`: the ingest service alone (HTTP on 3001, OTLP/gRPC on 4317 by default).
await runService(ingestService, IngestConfigSchema, {
  beforeListen: (app, config) => listenOtlpGrpcOrExit(app, { host: config.HOST, port: config.GRPC_PORT }),
})
