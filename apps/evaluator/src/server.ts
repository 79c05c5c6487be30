import { EvaluatorConfigSchema } from '@tracewell/config'
import { runService } from '@tracewell/service'
import { evaluatorService } from './app.ts'

// `npm run start:evaluator`: judges new traces and on-demand runs with the projects' evaluators.
await runService(evaluatorService, EvaluatorConfigSchema)
