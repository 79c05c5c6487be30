import { Type } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'
import { TraceRowSchema } from './trace.schemas.ts'

// The shapes of the session routes (docs/api.md#trace-queries): traces sharing a session id.

export const SessionRowSchema = Type.Object({
  sessionId: Type.String(),
  userId: Type.Union([Type.String(), Type.Null()]),
  firstSeen: IsoDateSchema,
  lastSeen: IsoDateSchema,
  traceCount: Type.Integer(),
  totalTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'the sum of its traces’ known totals; null when none is known' }),
  costUsd: Type.Union([Type.Number(), Type.Null()]),
})
export const SessionListSchema = Type.Object({ sessions: Type.Array(SessionRowSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) })
export const SessionSchema = Type.Object({ sessionId: Type.String(), userId: Type.Union([Type.String(), Type.Null()]), traces: Type.Array(TraceRowSchema) })
