import { Type, type Static } from '@sinclair/typebox'
import { passwordRules } from '@tracewell/policy'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of sign-in and of a person's own account (docs/api.md#accounts).

const TeamRoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin'), Type.Literal('owner')])

export const MeSchema = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }),
  teams: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      role: TeamRoleSchema,
      projects: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), role: TeamRoleSchema }), { description: 'the projects the person may see, with their role on each' }),
    }),
    { description: 'oldest membership first' },
  ),
})
export type MeBody = Static<typeof MeSchema>

export const SignInBodySchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
)
export type PasswordSignInBody = Static<typeof SignInBodySchema>

const NewPasswordSchema = Type.String({ minLength: 1, maxLength: 1024, description: `at least ${passwordRules.minLength} characters` })

export const ChangePasswordBodySchema = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
    newPassword: NewPasswordSchema,
  },
  { additionalProperties: false },
)
export type ChangePasswordBody = Static<typeof ChangePasswordBodySchema>

export const ProfileBodySchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })
export type ProfileBody = Static<typeof ProfileBodySchema>

export const OwnSessionSchema = Type.Object({
  id: Type.String(),
  current: Type.Boolean({ description: 'the session this request was made with' }),
  createdAt: IsoDateSchema,
  lastSeenAt: IsoDateSchema,
  expiresAt: IsoDateSchema,
  ip: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
})
export const OwnSessionListSchema = Type.Object({ sessions: Type.Array(OwnSessionSchema, { description: 'live sessions, most recently active first' }) })
export type OwnSessionList = Static<typeof OwnSessionListSchema>

export const OwnSessionParamsSchema = Type.Object({ sessionId: Type.String({ pattern: '^[0-9a-f-]{36}$', description: 'a session id from GET /api/me/sessions' }) })
export type OwnSessionParams = Static<typeof OwnSessionParamsSchema>
