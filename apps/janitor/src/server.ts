import { JanitorConfigSchema } from '@tracewell/config'
import { runService } from '@tracewell/service'
import { janitorService } from './app.ts'

// `npm run start:janitor`. The cleanup itself is triggered from outside (a Kubernetes CronJob
// calling GET /api/cron/cleanup-traces with the cron-api-key header); this process only serves it.
await runService(janitorService, JanitorConfigSchema)
