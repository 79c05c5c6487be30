import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { secretTokenHash } from '@tracewell/auth'
import { anyTeamOwnerExists, createTeam, findOldestTeam, findSetupLink, lockWorkspaceBootstrap, useSetupLinks, type Executor } from '@tracewell/db'
import { GoneError, NotFoundError } from '@tracewell/http'
import { EmailSchema, errorResponses, JoinedSchema, LinkTokenParamsSchema, NewPasswordSchema, PersonNameSchema } from '@tracewell/api-schemas'
import { authorize } from '../accounts/authorize.ts'
import { createPasswordAccount, joinTeam } from '../accounts/new-account.ts'
import { signInAfterJoining } from '../accounts/sign-in-after-joining.ts'
import { defaultTeamName } from '../bootstrap.ts'
import { requireCsrfHeader } from '../console/csrf.ts'

// The setup link (docs/accounts.md#the-first-owner; issue 44 §1): a fresh or upgraded install has
// no owner and no open sign-up; the link printed at start lets the first person make the owner
// account of the default team (the oldest, made now if there is none). It works once: using it,
// or any owner coming to exist (INIT_USER_EMAIL), ends every setup link.

export interface SetupRoutesOptions {
  /** Called once the link is used: `npm start` forgets the link it kept for `npm run keys`. */
  onSetupDone?: (() => Promise<void>) | undefined
}

const tags = ['accounts']

/** 404 for a link that never was; 410 once it was used or an owner exists. */
async function requireUsableSetupLink(db: Executor, token: string): Promise<void> {
  const link = await findSetupLink(db, secretTokenHash(token))
  if (link === undefined) throw new NotFoundError('No such setup link: check that the whole link was copied, or run `npm run keys` to see it again')
  if (link.used || (await anyTeamOwnerExists(db))) throw new GoneError('This Tracewell has its owner already: sign in, or ask an owner for an invitation')
}

export const setupRoutes: FastifyPluginAsyncTypebox<SetupRoutesOptions> = async (app, options) => {
  app.get(
    '/api/setup/:token',
    {
      onRequest: authorize,
      config: { permission: 'anyone' },
      schema: {
        operationId: 'getSetupLink',
        summary: 'Whether the setup link still works',
        description: 'For the console page the link opens: the team whose owner it makes. 404 for an unknown link, 410 once used.',
        tags,
        security: [],
        params: LinkTokenParamsSchema,
        response: { 200: Type.Object({ teamName: Type.String() }), ...errorResponses(400, 404, 410) },
      },
    },
    async (request, reply) => {
      await requireUsableSetupLink(app.db, request.params.token)
      void reply.header('cache-control', 'no-store')
      return { teamName: (await findOldestTeam(app.db))?.name ?? defaultTeamName }
    },
  )

  app.post(
    '/api/setup/:token',
    {
      onRequest: [authorize, requireCsrfHeader],
      config: { permission: 'anyone' },
      schema: {
        operationId: 'useSetupLink',
        summary: 'Make the owner account with the setup link',
        description: 'Creates the account, makes it the owner of the default team and signs it in (201). Once only. Requires the x-tracewell-csrf: 1 header.',
        tags,
        security: [],
        params: LinkTokenParamsSchema,
        body: Type.Object({ email: EmailSchema, name: PersonNameSchema, password: NewPasswordSchema }, { additionalProperties: false }),
        response: { 201: JoinedSchema, ...errorResponses(400, 403, 404, 409, 410) },
      },
    },
    async (request, reply) => {
      const { email, name, password } = request.body
      const { user, teamId } = await app.db.transaction().execute(async (trx) => {
        // The bootstrap lock: two uses of setup links at once, or one beside INIT_USER_EMAIL at a
        // replica's start, make one owner.
        await lockWorkspaceBootstrap(trx)
        await requireUsableSetupLink(trx, request.params.token)
        const team = (await findOldestTeam(trx)) ?? (await createTeam(trx, { name: defaultTeamName }))
        const owner = await createPasswordAccount(trx, { email, name, password, emailVerified: false })
        await joinTeam(trx, team.id, owner.id, 'owner')
        await useSetupLinks(trx)
        return { user: owner, teamId: team.id }
      })
      await options.onSetupDone?.().catch((error: unknown) => request.log.warn({ err: error }, 'could not forget the used setup link'))
      return reply.code(201).send(await signInAfterJoining(request, reply, user, teamId))
    },
  )
}
