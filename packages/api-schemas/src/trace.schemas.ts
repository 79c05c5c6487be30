import { Type, type Static } from '@sinclair/typebox'
import { StoredSpanSchema } from '@tracewell/span-schema'
import { IsoDateSchema } from './common.schemas.ts'
import { ScoreSchema } from './score.schemas.ts'

// The shapes of the trace routes (docs/api.md#trace-queries): the trace list, one trace.

export const TraceRowSchema = Type.Object({
  traceId: Type.String(),
  name: Type.String({ description: 'the root span’s name (the earliest span’s until the root arrives)' }),
  serviceName: Type.Union([Type.String(), Type.Null()]),
  startTime: IsoDateSchema,
  endTime: IsoDateSchema,
  durationMs: Type.Number(),
  spanCount: Type.Integer(),
  errorCount: Type.Integer(),
  models: Type.Array(Type.String()),
  inputTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'the sum of the counts the spans reported; null when none reported one (unknown, not 0)' }),
  outputTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'as inputTokens' }),
  totalTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'as inputTokens; a span without a total counts its input and output' }),
  costUsd: Type.Union([Type.Number(), Type.Null()], { description: 'null when no span of the trace could be priced' }),
  tokensEstimated: Type.Boolean({ description: 'a span’s token counts are estimates (spans[].tokensEstimated): the tokens and the cost are not exact' }),
  sessionId: Type.Union([Type.String(), Type.Null()]),
  userId: Type.Union([Type.String(), Type.Null()]),
  scores: Type.Array(ScoreSchema, { description: 'the trace’s scores (and its spans’), oldest first' }),
})
export const TraceListSchema = Type.Object({
  traces: Type.Array(Type.Object({ ...TraceRowSchema.properties, commentCount: Type.Integer({ description: 'comments on the trace (docs/collaboration.md#comments)' }) })),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next page; null on the last' }),
})
export type TraceList = Static<typeof TraceListSchema>

/** A stored span with every field; attributes in the map form (the one definition, @tracewell/span-schema). */
export const SpanSchema = StoredSpanSchema
export const TraceSchema = Type.Object({
  traceId: Type.String(),
  spans: Type.Array(SpanSchema),
  scores: Type.Array(ScoreSchema, { description: 'the trace’s scores and its spans’ (spanId set), oldest first' }),
})
export type Trace = Static<typeof TraceSchema>
