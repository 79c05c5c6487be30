import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createTeam } from '@tracewell/db'
import { requireAdminKey } from '../auth.ts'
import { mintApiKey } from '../mint-api-key.ts'
import { errorResponses, IsoDateSchema } from '@tracewell/api-schemas'

export const CreateTeamBodySchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) })
export type CreateTeamBody = Static<typeof CreateTeamBodySchema>

export const CreatedTeamSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: IsoDateSchema,
  apiKey: Type.String({ description: 'the team’s first team key, shown only in this response' }),
})
export type CreatedTeam = Static<typeof CreatedTeamSchema>

export interface TeamRoutesOptions {
  /** ADMIN_API_KEY; when unset, teams cannot be created over HTTP (use the INIT_* bootstrap). */
  adminApiKey?: string | undefined
}

export const teamRoutes: FastifyPluginAsyncTypebox<TeamRoutesOptions> = async (app, options) => {
  app.post(
    '/api/teams',
    {
      onRequest: requireAdminKey(options.adminApiKey),
      // The ADMIN_API_KEY alone, judged by requireAdminKey: no person or team key makes teams here.
      config: { permission: 'admin-key' },
      schema: {
        operationId: 'createTeam',
        summary: 'Create a team and its first team key',
        tags: ['teams'],
        security: [{ adminKey: [] }],
        body: CreateTeamBodySchema,
        response: { 201: CreatedTeamSchema, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      // One transaction: a team is never left without the key its creator was promised.
      const { team, secret } = await app.db.transaction().execute(async (trx) => {
        const created = await createTeam(trx, { name: request.body.name })
        return { team: created, secret: (await mintApiKey(trx, 'team', { teamId: created.id, projectId: null })).secret }
      })
      void reply.header('cache-control', 'no-store')
      return reply.code(201).send({ ...team, apiKey: secret })
    },
  )
}
