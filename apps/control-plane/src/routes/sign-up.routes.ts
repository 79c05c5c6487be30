import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ForbiddenError } from '@tracewell/http'
import { EmailSchema, errorResponses, JoinedSchema, NewPasswordSchema, PersonNameSchema } from '@tracewell/api-schemas'
import { authorize } from '../accounts/authorize.ts'
import { createPasswordAccount } from '../accounts/new-account.ts'
import { signInAfterJoining } from '../accounts/sign-in-after-joining.ts'
import type { SignupMode } from '../accounts/signup-mode.ts'
import { requireCsrfHeader } from '../console/csrf.ts'

// Open sign-up (SIGNUP=open; docs/accounts.md#sign-up): anyone makes an account, which belongs to
// no team until invited. With SIGNUP=invite (the default) or off, refused with the reason.

export interface SignUpRoutesOptions {
  signup: SignupMode
}

const closedMessages: Record<Exclude<SignupMode, 'open'>, string> = {
  invite: 'Sign-up is by invitation on this server (SIGNUP=invite): ask an admin of your team to invite you',
  off: 'Sign-up is turned off on this server (SIGNUP=off): accounts come from single sign-on',
}

export const signUpRoutes: FastifyPluginAsyncTypebox<SignUpRoutesOptions> = async (app, options) => {
  app.post(
    '/api/auth/sign-up',
    {
      onRequest: [authorize, requireCsrfHeader],
      config: { permission: 'anyone' },
      schema: {
        operationId: 'signUp',
        summary: 'Make an account (SIGNUP=open only)',
        description: 'The account belongs to no team until it is invited to one; it is signed in (201). 403 unless SIGNUP=open. Requires the x-tracewell-csrf: 1 header.',
        tags: ['accounts'],
        security: [],
        body: Type.Object({ email: EmailSchema, name: PersonNameSchema, password: NewPasswordSchema }, { additionalProperties: false }),
        response: { 201: JoinedSchema, ...errorResponses(400, 403, 409) },
      },
    },
    async (request, reply) => {
      if (options.signup !== 'open') throw new ForbiddenError(closedMessages[options.signup])
      const user = await createPasswordAccount(app.db, { ...request.body, emailVerified: false })
      return reply.code(201).send(await signInAfterJoining(request, reply, user, null))
    },
  )
}
