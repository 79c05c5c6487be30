import { ControlPlaneConfigSchema } from '@tracewell/config'
import { runService } from '@tracewell/service'
import { controlPlaneService } from './app.ts'

// `npm run start:control-plane`: the management API, the promptsets and the web console.
await runService(controlPlaneService, ControlPlaneConfigSchema)
