import { Type } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of the share link routes (docs/collaboration.md#share-links).

export const TraceShareSchema = Type.Object({
  id: Type.String(),
  traceId: Type.String(),
  createdBy: Type.Object({ userId: Type.Union([Type.String(), Type.Null()]), keyId: Type.Union([Type.String(), Type.Null()]) }),
  createdAt: IsoDateSchema,
  expiresAt: Type.Union([IsoDateSchema, Type.Null()]),
  revokedAt: Type.Union([IsoDateSchema, Type.Null()]),
})
export const ShareTokenParamsSchema = Type.Object({ token: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'the token of a share link' }) })
