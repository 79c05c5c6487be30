import { Type } from '@sinclair/typebox'

// The shape of GET /api/summaries/status: how far the summaries are behind the stored spans.

export const SummariesStatusSchema = Type.Object({
  pendingTraces: Type.Integer({ description: 'traces with spans stored but not yet in the summaries (a trace stored by two batches counts twice)' }),
  lagSeconds: Type.Number({ description: 'how long the oldest of them has waited; 0 when none waits' }),
})
