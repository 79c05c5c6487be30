import { Type } from '@sinclair/typebox'

// The switch that shows Tracewell's own traces (the playground, experiments, judges: service.name
// `tracewell`) in the trace list, sessions and usage, which leave them out by default so that
// they show the application's own traffic and spend.
export const includeTracewellCallsProperty = {
  include_tracewell_calls: Type.Boolean({
    default: false,
    description: 'also Tracewell’s own traces (playground, experiments, judges: service.name tracewell), left out by default',
  }),
}
