import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findSessionTraces, scoresOfTraces, searchSessions } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, figureBoundProperties, includeTracewellCallsProperty, ProjectScopeQuerySchema, SessionListSchema, SessionSchema } from '@tracewell/api-schemas'
import { toScore } from '../scores/to-score.ts'
import { figureBounds, timeWindow } from './query-bounds.ts'
import { postgresTimeAsIso } from './trace-queries.routes.ts'

const SessionListQuerySchema = Type.Object({
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  cursor: Type.Optional(Type.String({ maxLength: 300, description: 'nextCursor of the previous page' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive: the session’s traces starting at or after (its figures are then of those traces)' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive: …starting before' })),
  user: Type.Optional(Type.String({ maxLength: 500 })),
  ...figureBoundProperties,
  ...includeTracewellCallsProperty,
})

// The session cursor: base64url of the last row's last-seen time (as Postgres wrote it) and id.
const encodeSessionCursor = (cursor: { lastSeen: string; sessionId: string }) => Buffer.from(JSON.stringify([cursor.lastSeen, cursor.sessionId])).toString('base64url')

function decodeSessionCursor(raw: string): { lastSeen: string; sessionId: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      const [lastSeen, sessionId] = parsed as [string, string]
      if (/^\d{4}-\d{2}-\d{2} [\d:.]+[+-]\d{2}(:\d{2})?$/.test(lastSeen) && !Number.isNaN(Date.parse(postgresTimeAsIso(lastSeen))) && !sessionId.includes('\0')) {
        return { lastSeen, sessionId }
      }
    }
  } catch {
    // falls through to the 400
  }
  throw new BadRequestError('querystring/cursor: not a nextCursor returned by this API')
}

/** Sessions (traces sharing a session id): the list, and one session's traces in order. */
export const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/sessions',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'listSessions',
        summary: 'Sessions, most recently active first',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        querystring: SessionListQuerySchema,
        response: {
          200: SessionListSchema,
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const { limit, cursor, user, include_tracewell_calls: includeTracewellCalls } = request.query
      const search = {
        projectId: callerProjectId(request),
        limit,
        cursor: cursor ? decodeSessionCursor(cursor) : undefined,
        ...timeWindow(request.query),
        ...figureBounds(request.query),
        userId: user,
        includeTracewellCalls,
      }
      const page = await app.timedQuery((db) => searchSessions(db, search))
      return { sessions: page.sessions, nextCursor: page.next ? encodeSessionCursor(page.next) : null }
    },
  )

  app.get(
    '/api/sessions/:sessionId',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'getSession',
        summary: 'One session: its traces, oldest first (at most 1,000)',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        params: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 500 }) }),
        querystring: ProjectScopeQuerySchema,
        response: {
          200: SessionSchema,
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const { sessionId } = request.params
      const projectId = callerProjectId(request)
      const traces = await app.timedQuery((db) => findSessionTraces(db, projectId, sessionId, 1_000))
      if (traces.length === 0) throw new NotFoundError('Session not found')
      const scores = await scoresOfTraces(app.db, projectId, traces.map((trace) => trace.traceId))
      return {
        sessionId,
        userId: traces.find((trace) => trace.userId !== null)?.userId ?? null,
        traces: traces.map((trace) => ({ ...trace, scores: (scores.get(trace.traceId) ?? []).map(toScore) })),
      }
    },
  )
}
