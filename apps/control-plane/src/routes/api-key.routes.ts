import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findTeamApiKeyHash, listApiKeys, revokeApiKey } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { keyScopes, type KeyScope } from '@tracewell/policy'
import type { FastifyRequest } from 'fastify'
import { authorize, chooseAccess } from '../accounts/authorize.ts'
import { callerTeamId } from '../auth.ts'
import { mintApiKey } from '../mint-api-key.ts'
import { ApiKeyListSchema, ApiKeyParamsSchema, type CreateApiKeyBody, CreateApiKeyBodySchema, errorResponses, type KeyScopeQuery, KeyScopeQuerySchema, NewSecretSchema, type RevokeApiKeyQuery, RevokeApiKeyQuerySchema } from '@tracewell/api-schemas'

/** A new key's scopes when the request names none: what a member may do through the API, as before scopes. */
export const defaultKeyScopes: readonly KeyScope[] = keyScopes

/**
 * One route makes (and lists) both kinds: `?team_id=` the team's keys, needing team-keys:manage;
 * `?project_id=` a project's keys, needing keys:manage on that project (a project admin may).
 */
const keysAccess = chooseAccess(['keys:manage', 'team-keys:manage'], (request) => ((request.query as KeyScopeQuery).team_id !== undefined ? 'team-keys:manage' : 'keys:manage'))

interface KeyOwner {
  teamId: string
  /** null: the team's own keys. */
  projectId: string | null
}

/** Which keys a request is about: the project or team `authorize` admitted it to. */
function ownerOf(request: FastifyRequest, query: KeyScopeQuery): KeyOwner {
  if (query.project_id !== undefined && query.team_id !== undefined) throw new BadRequestError('querystring: pass either project_id or team_id, not both')
  const teamId = callerTeamId(request)
  return query.team_id !== undefined ? { teamId, projectId: null } : { teamId, projectId: request.controlPlaneProjectId }
}

/** The creation body's scopes and expiry, checked: scopes are for project keys, expiries in the future. */
function keyTermsOf(body: CreateApiKeyBody, owner: KeyOwner): { scopes: readonly KeyScope[] | null; expiresAt: Date | null } {
  if (owner.projectId === null && body.scopes !== undefined) throw new BadRequestError('body/scopes: only project keys have scopes; a team key acts as an admin of its team')
  let expiresAt: Date | null = null
  if (body.expiresAt !== undefined) {
    expiresAt = new Date(body.expiresAt)
    if (Number.isNaN(expiresAt.getTime())) throw new BadRequestError('body/expiresAt: must be an ISO 8601 date-time')
    if (expiresAt.getTime() <= Date.now()) throw new BadRequestError('body/expiresAt: must be in the future')
  }
  return { scopes: owner.projectId === null ? null : (body.scopes ?? defaultKeyScopes), expiresAt }
}

/** Key management (docs/api.md#api-keys): create (secret shown once), list (never secrets), revoke. */
export const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/api-key',
    {
      onRequest: authorize,
      config: { permission: keysAccess },
      // Clients send `Content-Type: application/json` and no body (the parser reads that as no
      // body): it asks for the defaults, as an empty object does.
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create a project API key (or, with team_id, a team API key)',
        description:
          'The secret is in this response only; it is stored as a SHA-256 hash. Other keys stay valid. The body is optional ' +
          '(`Content-Type: application/json` with no body is accepted): scopes for a project key, and an expiry.',
        tags: ['api keys'],
        security: [{ apiKey: [] }],
        querystring: KeyScopeQuerySchema,
        body: CreateApiKeyBodySchema,
        response: { 200: NewSecretSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const owner = ownerOf(request, request.query)
      const terms = keyTermsOf(request.body, owner)
      const principal = request.principal
      const createdByUserId = principal?.kind === 'user' ? principal.user.id : null
      const { secret } = await mintApiKey(app.db, owner.projectId === null ? 'team' : 'project', owner, undefined, { ...terms, createdByUserId })
      // A secret must not linger in a shared cache on the way back.
      void reply.header('cache-control', 'no-store')
      return { apiKey: secret }
    },
  )

  app.get(
    '/api/api-keys',
    {
      onRequest: authorize,
      config: { permission: keysAccess },
      schema: {
        operationId: 'listApiKeys',
        summary: 'List the keys of a project (project_id) or the team keys (team_id)',
        description: 'With each key its scopes, who made it, when it expires and when it was last used (to the minute).',
        tags: ['api keys'],
        security: [{ apiKey: [] }],
        querystring: KeyScopeQuerySchema,
        response: { 200: ApiKeyListSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ apiKeys: await listApiKeys(app.db, ownerOf(request, request.query)) }),
  )

  app.delete(
    '/api/api-keys/:id',
    {
      onRequest: authorize,
      config: { permission: chooseAccess(['keys:manage', 'team-keys:manage'], (request) => ((request.query as RevokeApiKeyQuery).project_id !== undefined ? 'keys:manage' : 'team-keys:manage')) },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke a key of the team or of one of its projects',
        description: 'Takes effect on every instance within 5 seconds. With project_id, only a key of that project (what a project admin may revoke).',
        tags: ['api keys'],
        security: [{ apiKey: [] }],
        params: ApiKeyParamsSchema,
        querystring: RevokeApiKeyQuerySchema,
        response: { 204: Type.Null({ description: 'revoked' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const teamId = callerTeamId(request)
      const revoked = await revokeApiKey(app.db, teamId, request.params.id, request.controlPlaneProjectId ?? undefined)
      if (!revoked) throw new NotFoundError('API key not found')
      // Refused here at once; other instances refuse it when their cached entry expires (≤ 5 s).
      const keyHash = await findTeamApiKeyHash(app.db, teamId, request.params.id)
      if (keyHash !== undefined) app.apiKeys.forget(keyHash)
      app.consoleSessions?.forgetKey(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
