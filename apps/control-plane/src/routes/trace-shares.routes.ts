import { Type } from '@sinclair/typebox'
import { newSecretToken, secretTokenHash } from '@tracewell/auth'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { commentTargetExists, createTraceShare, findLiveTraceShare, listTraceShares, revokeTraceShare } from '@tracewell/db'
import { answerFailedKey, BadRequestError, NotFoundError } from '@tracewell/http'
import { authorize } from '../accounts/authorize.ts'
import { sharedPageHeaders } from '../collaboration/shared-page-headers.ts'
import { errorResponses, IdSchema, IsoDateSchema, TraceShareSchema, ShareTokenParamsSchema, TraceSchema } from '@tracewell/api-schemas'
import { TraceParamsSchema, traceDocument, traceIdOf } from './trace-queries.routes.ts'

// Share links (docs/collaboration.md#share-links): a token that opens one trace, read-only, to
// anyone who has it, without signing in. The public route answers that trace and nothing else;
// the token is 32 random bytes, stored only as its SHA-256.

export interface TraceShareRoutesOptions {
  /** PUBLIC_URL: where people reach Tracewell; without it, the request's own origin. */
  publicUrl: string | undefined
}

const ProjectQuerySchema = Type.Object({ project_id: Type.Optional(Type.String()) })

export const traceShareRoutes: FastifyPluginAsyncTypebox<TraceShareRoutesOptions> = async (app, options) => {
  const tags = ['collaboration']
  const security = [{ apiKey: [] }]

  app.post(
    '/api/traces/:traceId/share',
    {
      onRequest: authorize,
      config: { permission: 'traces:share' },
      schema: {
        operationId: 'shareTrace',
        summary: 'A link that opens this trace, read-only, to anyone who has it',
        description: 'The token is shown only in this answer. Revoke it with DELETE /api/trace-shares/:shareId.',
        tags,
        security,
        params: TraceParamsSchema,
        querystring: ProjectQuerySchema,
        body: Type.Optional(Type.Object({ expiresAt: Type.Optional(IsoDateSchema) }, { additionalProperties: false })),
        response: { 201: Type.Object({ ...TraceShareSchema.properties, url: Type.String(), token: Type.String() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const projectId = request.controlPlaneProjectId as string
      const traceId = traceIdOf(request.params.traceId)
      const expiresAtText = request.body?.expiresAt
      const expiresAt = expiresAtText === undefined ? null : new Date(expiresAtText)
      if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) throw new BadRequestError('body/expiresAt: expected an ISO 8601 date-time')
      if (expiresAt !== null && expiresAt.getTime() <= Date.now()) throw new BadRequestError('body/expiresAt: must be in the future')
      // Whether the trace is there, not the trace itself: its spans are read when the link is opened.
      if (!(await commentTargetExists(app.db, projectId, 'trace', traceId))) throw new NotFoundError('Trace not found')
      const { token, tokenHash } = newSecretToken()
      const principal = request.principal
      const share = await createTraceShare(app.db, {
        tokenHash,
        projectId,
        traceId,
        createdByUserId: principal?.kind === 'user' ? principal.user.id : null,
        createdByKeyId: principal?.kind === 'key' ? principal.key.id : null,
        expiresAt,
      })
      const origin = options.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`
      return reply.code(201).send({ ...share, url: `${origin}/shared/${token}`, token })
    },
  )

  app.get(
    '/api/traces/:traceId/shares',
    {
      onRequest: authorize,
      config: { permission: 'traces:share' },
      schema: { operationId: 'listTraceShares', summary: 'A trace’s share links (never their tokens), newest first', tags, security, params: TraceParamsSchema, querystring: ProjectQuerySchema, response: { 200: Type.Object({ shares: Type.Array(TraceShareSchema) }), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => ({ shares: await listTraceShares(app.db, request.controlPlaneProjectId as string, traceIdOf(request.params.traceId)) }),
  )

  app.delete(
    '/api/trace-shares/:shareId',
    {
      onRequest: authorize,
      config: { permission: 'traces:share' },
      schema: { operationId: 'revokeTraceShare', summary: 'Revoke a share link: it opens nothing from then on', tags, security, params: Type.Object({ shareId: IdSchema }), querystring: ProjectQuerySchema, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      if (!(await revokeTraceShare(app.db, request.controlPlaneProjectId as string, request.params.shareId))) throw new NotFoundError('Share link not found (or revoked already)')
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/shared/traces/:token',
    {
      config: { permission: 'anyone' },
      onRequest: authorize,
      schema: {
        operationId: 'readSharedTrace',
        security: [],
        summary: 'The trace a share link opens, read-only, without signing in',
        tags,
        params: ShareTokenParamsSchema,
        response: { 200: TraceSchema, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      void reply.headers(sharedPageHeaders)
      const share = await findLiveTraceShare(app.db, secretTokenHash(request.params.token))
      // A wrong token is a failed secret like a wrong key: its answer waits its turn.
      if (share === undefined) await answerFailedKey(app, request.ip)
      const body = share === undefined ? null : await traceDocument(app, share.projectId, share.traceId)
      if (body === null) throw new NotFoundError('This share link does not exist, has expired or was revoked')
      return reply.type('application/json; charset=utf-8').send(body)
    },
  )
}
