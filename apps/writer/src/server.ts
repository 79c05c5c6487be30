import { WriterConfigSchema } from '@tracewell/config'
import { runService } from '@tracewell/service'
import { writerService } from './app.ts'

// `npm run start:writer`: drains the span-batch queue from Redis into Postgres.
await runService(writerService, WriterConfigSchema)
