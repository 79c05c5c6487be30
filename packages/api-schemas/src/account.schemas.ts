import { Type, type Static } from '@sinclair/typebox'
import { passwordRules, projectRoles, teamRoles } from '@tracewell/policy'
import { IsoDateSchema } from './common.schemas.ts'

// Shapes of the accounts routes (invitations, members, password reset, setup, sign-up).

export const EmailSchema = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'an email address' })
export const PersonNameSchema = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'the name others see' })
/** Checked further by passwordProblem (@tracewell/auth): the schema only bounds it. */
export const NewPasswordSchema = Type.String({ minLength: 1, maxLength: passwordRules.maxLength, description: `at least ${passwordRules.minLength} characters` })

export const TeamRoleSchema = Type.Union(teamRoles.map((role) => Type.Literal(role)), { description: teamRoles.join(', ') })
export const ProjectRoleSchema = Type.Union(projectRoles.map((role) => Type.Literal(role)), { description: `${projectRoles.join(', ')} (none hides the project)` })

export const ProjectRoleGrantSchema = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }), role: ProjectRoleSchema })
export type ProjectRoleGrant = Static<typeof ProjectRoleGrantSchema>
export const ProjectRoleGrantsSchema = Type.Array(ProjectRoleGrantSchema, { maxItems: 1000, description: 'roles on single projects that override the team role, higher or lower' })

export const PersonSchema = Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() })

export const TeamMemberSchema = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: TeamRoleSchema,
  projectRoles: Type.Array(ProjectRoleGrantSchema),
  joinedAt: IsoDateSchema,
})
export type TeamMember = Static<typeof TeamMemberSchema>

export const InvitationSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: TeamRoleSchema,
  projectRoles: Type.Array(ProjectRoleGrantSchema),
  invitedBy: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()], { description: 'null: invited with a team key' }),
  mailed: Type.Boolean({ description: 'whether the link went out by mail' }),
  state: Type.Union([Type.Literal('pending'), Type.Literal('expired')]),
  createdAt: IsoDateSchema,
  expiresAt: IsoDateSchema,
})

/** What accepting an invitation, using the setup link or signing up answers. */
export const JoinedSchema = Type.Object({
  user: PersonSchema,
  teamId: Type.Union([Type.String(), Type.Null()], { description: 'the team joined; null for an open sign-up' }),
  signedIn: Type.Boolean({ description: 'whether the answer carries a session cookie (it does wherever the console is served)' }),
})
export type Joined = Static<typeof JoinedSchema>

/** The token of a link (invitation, password reset, setup), as its path parameter. */
export const LinkTokenParamsSchema = Type.Object({ token: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) })

export const CreateInvitationBodySchema = Type.Object(
  { email: EmailSchema, role: TeamRoleSchema, projectRoles: Type.Optional(ProjectRoleGrantsSchema) },
  { additionalProperties: false },
)
export const CreatedInvitationSchema = Type.Object({
  id: Type.String(),
  url: Type.String({ description: 'the link to accept it; shown to the inviter to copy whether or not it was mailed' }),
  expiresAt: IsoDateSchema,
  mailed: Type.Boolean({ description: 'whether the mail server took the mail' }),
  mailError: Type.Union([Type.String(), Type.Null()], { description: 'why it was not mailed: no SMTP_URL, or what the mail server said' }),
})

export const InvitationPreviewSchema = Type.Object({
  teamName: Type.String(),
  email: Type.String(),
  role: TeamRoleSchema,
  expiresAt: IsoDateSchema,
  accountExists: Type.Boolean({ description: 'whether the invited email has an account: then the person signs in and accepts, else creates one here' }),
  signupAllowed: Type.Boolean({ description: 'false with SIGNUP=off: only an existing account may accept' }),
})

export const AcceptBodySchema = Type.Object(
  {
    name: Type.Optional(PersonNameSchema),
    password: Type.Optional(NewPasswordSchema),
  },
  { additionalProperties: false, description: 'name and password for a new account; empty when a signed-in person joins' },
)

export const ChangeMemberBodySchema = Type.Object(
  {
    role: Type.Optional(TeamRoleSchema),
    projectRoles: Type.Optional(
      Type.Array(Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }), role: Type.Union([ProjectRoleSchema, Type.Null()], { description: 'null removes the override' }) }), {
        maxItems: 1000,
        description: 'per-project roles to set (null: back to the team role); projects not named keep theirs',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
)
