import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shape of a team-key session of the console (GET /api/session).

export const ConsoleSessionSchema = Type.Object({
  teamId: Type.String(),
  teamName: Type.String(),
  expiresAt: IsoDateSchema,
})
export type ConsoleSession = Static<typeof ConsoleSessionSchema>
