import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findTeamApiKeyHash, findTeamProject, listApiKeys, revokeApiKey, type Db } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { callerTeamId, requireTeamKey } from '../auth.ts'
import { mintApiKey } from '../mint-api-key.ts'
import { ApiKeySchema, errorResponses, IdSchema, NewSecretSchema } from '../schemas.ts'

export const KeyScopeQuerySchema = Type.Object({
  project_id: Type.Optional({ ...IdSchema, description: 'a project of the caller’s team: its project keys' }),
  team_id: Type.Optional({ ...IdSchema, description: 'the caller’s own team: its team keys' }),
})
export type KeyScopeQuery = Static<typeof KeyScopeQuerySchema>

export const ApiKeyListSchema = Type.Object({ apiKeys: Type.Array(ApiKeySchema) })
export type ApiKeyList = Static<typeof ApiKeyListSchema>

export const ApiKeyParamsSchema = Type.Object({ id: IdSchema })
export type ApiKeyParams = Static<typeof ApiKeyParamsSchema>

interface KeyScope {
  teamId: string
  /** null: the team's own keys. */
  projectId: string | null
}

/**
 * Which keys a team-key request is about. Another team's project is a 404 as if it did not exist
 * (docs/api.md#credentials); another team's id likewise reads as an unknown team.
 */
async function resolveScope(db: Db, request: FastifyRequest, query: KeyScopeQuery): Promise<KeyScope> {
  const teamId = callerTeamId(request)
  if (query.project_id !== undefined && query.team_id !== undefined) {
    throw new BadRequestError('querystring: pass either project_id or team_id, not both')
  }
  if (query.project_id !== undefined) {
    const project = await findTeamProject(db, teamId, query.project_id)
    if (!project) throw new NotFoundError('Project not found')
    return { teamId, projectId: project.id }
  }
  if (query.team_id !== undefined) {
    if (query.team_id !== teamId) throw new NotFoundError('Team not found')
    return { teamId, projectId: null }
  }
  throw new BadRequestError('querystring/project_id: required (or team_id for a team key)')
}

/** Key management with a team key: create (secret shown once), list (never secrets), revoke. */
export const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/api-key',
    {
      onRequest: requireTeamKey,
      schema: {
        operationId: 'createApiKey',
        summary: 'Create a project API key (or, with team_id, a team API key)',
        description: 'The secret is in this response only; it is stored as a SHA-256 hash. Other keys stay valid.',
        tags: ['api keys'],
        security: [{ apiKey: [] }],
        querystring: KeyScopeQuerySchema,
        response: { 200: NewSecretSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const scope = await resolveScope(app.db, request, request.query)
      const kind = scope.projectId === null ? 'team' : 'project'
      const { secret } = await mintApiKey(app.db, kind, scope)
      // A secret must not linger in a shared cache on the way back.
      void reply.header('cache-control', 'no-store')
      return { apiKey: secret }
    },
  )

  app.get(
    '/api/api-keys',
    {
      onRequest: requireTeamKey,
      schema: {
        operationId: 'listApiKeys',
        summary: 'List the keys of a project (project_id) or the team keys (team_id)',
        tags: ['api keys'],
        security: [{ apiKey: [] }],
        querystring: KeyScopeQuerySchema,
        response: { 200: ApiKeyListSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const scope = await resolveScope(app.db, request, request.query)
      return { apiKeys: await listApiKeys(app.db, scope) }
    },
  )

  app.delete(
    '/api/api-keys/:id',
    {
      onRequest: requireTeamKey,
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke a key of the team or of one of its projects',
        description: 'Takes effect on every instance within 5 seconds.',
        tags: ['api keys'],
        security: [{ apiKey: [] }],
        params: ApiKeyParamsSchema,
        response: { 204: Type.Null({ description: 'revoked' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const teamId = callerTeamId(request)
      const revoked = await revokeApiKey(app.db, teamId, request.params.id)
      if (!revoked) throw new NotFoundError('API key not found')
      // Refused here at once; other instances refuse it when their cached entry expires (≤ 5 s).
      const keyHash = await findTeamApiKeyHash(app.db, teamId, request.params.id)
      if (keyHash !== undefined) app.apiKeys.forget(keyHash)
      app.consoleSessions?.forgetKey(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
