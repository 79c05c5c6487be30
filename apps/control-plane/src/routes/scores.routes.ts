import { randomUUID } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { deleteScore, listScores } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerLabel, callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, ScoreDataTypeSchema, ScoreNameSchema, ScoreSchema, ScoreSourceSchema } from '@tracewell/api-schemas'
import { toScore } from '../scores/to-score.ts'
import { recordScore } from '../scores/record-score.ts'
import { timeWindow } from './query-bounds.ts'
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from './created-at-cursor.ts'

// Scores on traces, spans and sessions (docs/api.md#scores). POST is an upsert by id: a caller
// that gives its own id can resend the score safely, and send it again with another value to
// change it.

const scoreIdPattern = '^[A-Za-z0-9_.:-]{1,200}$'
const scoreIdRegExp = new RegExp(scoreIdPattern)
export const ScoreIdSchema = Type.String({ pattern: scoreIdPattern, description: '1–200 of A-Z a-z 0-9 _ . : -' })
const TraceIdSchema = Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: '32 hex characters' })
const SpanIdSchema = (description = '16 hex characters') => Type.String({ pattern: '^[0-9a-fA-F]{16}$', description })
const SessionIdSchema = (description = 'a session id') => Type.String({ minLength: 1, maxLength: 500, description })

const ScoreBodySchema = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: scoreIdPattern, description: 'your id for the score: sending it again replaces the score (default: a new UUID)' })),
    traceId: Type.Optional(TraceIdSchema),
    spanId: Type.Optional(SpanIdSchema('a span of the trace, 16 hex characters (needs traceId)')),
    sessionId: Type.Optional(SessionIdSchema('a session: alone, a score on the whole session')),
    name: ScoreNameSchema,
    value: Type.Union([Type.Number(), Type.Boolean(), Type.String({ maxLength: 200 })], {
      description: 'a number, true/false, or a category’s label; checked against the score’s configuration when it has one',
    }),
    dataType: Type.Optional(ScoreDataTypeSchema),
    comment: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
    source: Type.Optional({ ...ScoreSourceSchema, description: 'api (the default) or annotation; eval is refused: only Tracewell’s evaluators give it' }),
    author: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'who gave it (default: `key:<the api key’s id>`)' })),
  },
  { additionalProperties: false },
)

const ScoreListQuerySchema = Type.Object({
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key (a project key implies its own)' })),
  trace_id: Type.Optional(TraceIdSchema),
  span_id: Type.Optional(SpanIdSchema()),
  session_id: Type.Optional(SessionIdSchema()),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  source: Type.Optional(ScoreSourceSchema),
  from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive: given at or after' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive: given before' })),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  cursor: Type.Optional(Type.String({ maxLength: 300, description: 'nextCursor of the previous page' })),
})

const ScoreListSchema = Type.Object({ scores: Type.Array(ScoreSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) })

export const ScoreParamsSchema = Type.Object({ scoreId: ScoreIdSchema })

export type ScoreBody = Static<typeof ScoreBodySchema>

/** POST/GET /api/scores and DELETE /api/scores/:scoreId (project key, or team key with project_id). */
export const scoreRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/scores',
    {
      onRequest: authorize,
      config: { permission: 'scores:write' },
      schema: {
        operationId: 'createScore',
        summary: 'Score a trace, one of its spans, or a session (an upsert by id)',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        querystring: Type.Object({ project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })) }),
        body: ScoreBodySchema,
        response: { 201: ScoreSchema, 200: ScoreSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const body = request.body
      if (body.traceId === undefined && body.sessionId === undefined) throw new BadRequestError('body: a score needs a traceId or a sessionId')
      if (body.spanId !== undefined && body.traceId === undefined) throw new BadRequestError('body/spanId: needs the traceId of its trace')
      // A judge's score is worth what the judge is: none but Tracewell's evaluator may give one.
      if (body.source === 'eval') throw new BadRequestError('body/source: eval scores are given only by Tracewell’s evaluators; send api or annotation')
      const { score, created } = await recordScore(app.db, {
        projectId: callerProjectId(request),
        id: body.id ?? randomUUID(),
        traceId: body.traceId?.toLowerCase() ?? null,
        spanId: body.spanId?.toLowerCase() ?? null,
        sessionId: body.sessionId ?? null,
        name: body.name,
        value: body.value,
        dataType: body.dataType,
        comment: body.comment ?? null,
        source: body.source ?? 'api',
        author: body.author ?? callerLabel(request),
      })
      return reply.code(created ? 201 : 200).send(toScore(score))
    },
  )

  app.get(
    '/api/scores',
    {
      onRequest: authorize,
      config: { permission: 'scores:read' },
      schema: {
        operationId: 'listScores',
        summary: 'Scores, newest first, filtered by trace, span, session, name, source and time',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        querystring: ScoreListQuerySchema,
        response: { 200: ScoreListSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listScores(app.db, {
        projectId: callerProjectId(request),
        limit: query.limit,
        traceId: query.trace_id?.toLowerCase(),
        spanIds: query.span_id === undefined ? undefined : [query.span_id.toLowerCase()],
        sessionId: query.session_id,
        name: query.name,
        source: query.source,
        ...timeWindow(query),
        cursor: query.cursor === undefined || query.cursor === '' ? undefined : decodeCreatedAtCursor(query.cursor, scoreIdRegExp),
      })
      return { scores: page.scores.map(toScore), nextCursor: page.next === null ? null : encodeCreatedAtCursor(page.next) }
    },
  )

  app.delete(
    '/api/scores/:scoreId',
    {
      onRequest: authorize,
      config: { permission: 'scores:write' },
      schema: {
        operationId: 'deleteScore',
        summary: 'Delete a score',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        params: ScoreParamsSchema,
        querystring: Type.Object({ project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })) }),
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteScore(app.db, callerProjectId(request), request.params.scoreId))) throw new NotFoundError('Score not found')
      return reply.code(204).send(null)
    },
  )
}
