import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { countTraceComments, deleteTrace, findTraceSpans, findTraceSpansJson, hasSearchableWord, scoresOfTraces, searchTraces, type TraceSearchCursor, type TraceSort } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { toOtlpJson } from '../otlp-export.ts'
import { errorResponses, ProjectScopeQuerySchema, type Trace, TraceListQuerySchema, TraceListSchema, TraceSchema } from '@tracewell/api-schemas'
import { toScore } from '../scores/to-score.ts'
import { figureBounds, parseIsoDate, timeWindow } from './query-bounds.ts'

export const TraceParamsSchema = Type.Object({ traceId: Type.String({ description: '32 hex characters (either case)' }) })
export type TraceParams = Static<typeof TraceParamsSchema>

// The cursor is opaque to clients: base64url of the sort it belongs to, the last row's sort value
// and its trace id. A cursor of another sort, or one not made here, is a 400.
export function encodeCursor(sort: TraceSort, cursor: TraceSearchCursor): string {
  return Buffer.from(JSON.stringify([sort, cursor.value, cursor.traceId])).toString('base64url')
}

const cursorValuePatterns: Record<TraceSort, RegExp> = {
  time: /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/,
  duration: /^-?\d{1,18}$/,
  cost: /^-?\d{1,30}(\.\d{1,30})?$/,
  tokens: /^-?\d{1,19}$/,
  score: /^(-?Infinity|-?\d{1,30}(\.\d{1,30})?(e[+-]\d{1,3})?)$/,
}

export function decodeCursor(sort: TraceSort, raw: string): TraceSearchCursor {
  const invalid = () => new BadRequestError('querystring/cursor: not a nextCursor returned by this API for this sort')
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== sort) throw invalid()
  const [, value, traceId] = parsed as unknown[]
  if (typeof value !== 'string' || !cursorValuePatterns[sort].test(value) || typeof traceId !== 'string' || !/^[0-9a-f]{32}$/.test(traceId)) throw invalid()
  // Year 0000 parses in JavaScript, not in Postgres: a 400 here, not a 500 there.
  if (sort === 'time' && (value.startsWith('0000') || Number.isNaN(Date.parse(postgresTimeAsIso(value))))) throw invalid()
  return { value, traceId }
}

/** `2026-01-01 00:01:00.5+00` (Postgres's text of a timestamptz) as ISO 8601, to check it is a real time. */
export const postgresTimeAsIso = (value: string): string => value.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00')

/** `key=value` of the attr filter. */
function attributeFilter(raw: string): { key: string; value: string } {
  const at = raw.indexOf('=')
  if (at <= 0) throw new BadRequestError(`querystring/attr: expected key=value, got ${JSON.stringify(raw)}`)
  return { key: raw.slice(0, at), value: raw.slice(at + 1) }
}

export { parseIsoDate }

/** Trace queries of the caller's project (project key), newest first. */
export const traceQueryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/traces',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'searchTraces',
        summary: 'Search traces: filters that combine, a sort, a page at a time',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        querystring: TraceListQuerySchema,
        response: { 200: TraceListSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const query = request.query
      if (query.q !== undefined && !hasSearchableWord(query.q)) {
        throw new BadRequestError('querystring/q: needs a word (letters or digits) to look for; text of punctuation alone would be looked for in every span')
      }
      const projectId = callerProjectId(request)
      const scoreName = query.score_name
      if (scoreName === undefined) {
        for (const name of ['min_score', 'max_score', 'score_value'] as const) {
          if (query[name] !== undefined) throw new BadRequestError(`querystring/${name}: needs score_name`)
        }
        if (query.sort === 'score') throw new BadRequestError('querystring/sort: sort=score needs score_name')
      }
      const search = {
        projectId,
        limit: query.limit,
        cursor: query.cursor === undefined || query.cursor === '' ? undefined : decodeCursor(query.sort, query.cursor),
        ...timeWindow(query),
        service: query.service,
        model: query.model,
        vendor: query.vendor,
        status: query.status,
        name: query.name,
        attributes: query.attr?.map(attributeFilter),
        sessionId: query.session,
        userId: query.user,
        ...figureBounds(query),
        text: query.q,
        score: scoreName === undefined ? undefined : { name: scoreName, min: query.min_score, max: query.max_score, value: query.score_value },
        sortScoreName: scoreName,
        sort: query.sort,
        order: query.order,
        includeTracewellCalls: query.include_tracewell_calls,
      }
      // One timed transaction, its queries one after the other (timed-queries.ts).
      const { page, scores, comments } = await app.timedQuery(async (db) => {
        const found = await searchTraces(db, search)
        const traceIds = found.traces.map((trace) => trace.traceId)
        return { page: found, scores: await scoresOfTraces(db, projectId, traceIds), comments: await countTraceComments(db, projectId, traceIds) }
      })
      return {
        traces: page.traces.map((trace) => ({ ...trace, scores: (scores.get(trace.traceId) ?? []).map(toScore), commentCount: comments.get(trace.traceId) ?? 0 })),
        nextCursor: page.next === null ? null : encodeCursor(query.sort, page.next),
      }
    },
  )

  app.get(
    '/api/traces/:traceId',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'getTrace',
        summary: 'One trace with all its spans',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        params: TraceParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: TraceSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const body = await traceDocument(app, callerProjectId(request), traceIdOf(request.params.traceId))
      if (body === null) throw new NotFoundError('Trace not found')
      return reply.type('application/json; charset=utf-8').send(body)
    },
  )

  app.delete(
    '/api/traces/:traceId',
    {
      onRequest: authorize,
      config: { permission: 'traces:delete' },
      schema: {
        operationId: 'deleteTrace',
        summary: 'Delete one trace: its spans and its summary',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        params: TraceParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const traceId = traceIdOf(request.params.traceId)
      const deleted = await deleteTrace(app.db, callerProjectId(request), traceId)
      if (deleted === 0) throw new NotFoundError('Trace not found')
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/traces/:traceId/otlp',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'exportTrace',
        summary: 'One trace as an OTLP/JSON ExportTraceServiceRequest',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        params: TraceParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ resourceSpans: Type.Array(Type.Unknown()) }, { additionalProperties: true }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const traceId = traceIdOf(request.params.traceId)
      const spans = await app.timedQuery((db) => findTraceSpans(db, projectId, traceId))
      if (spans.length === 0) throw new NotFoundError('Trace not found')
      return toOtlpJson(spans)
    },
  )
}

/**
 * One trace as GET /api/traces/:traceId answers it (also a share link's), or null when the project
 * has no such trace. Sent as the text the repository writes (a string skips the response
 * serializer): the spans' JSON columns are never parsed and written again.
 */
export async function traceDocument(app: FastifyInstance, projectId: string, traceId: string): Promise<Trace | null> {
  const { spans, scores } = await app.timedQuery(async (db) => ({
    spans: await findTraceSpansJson(db, projectId, traceId),
    scores: await scoresOfTraces(db, projectId, [traceId]),
  }))
  if (spans === null) return null
  // The text is the TraceSchema document; the type provider only knows the object form.
  return `{"traceId":"${traceId}","spans":${spans},"scores":${JSON.stringify((scores.get(traceId) ?? []).map(toScore))}}` as unknown as Trace
}

export function traceIdOf(raw: string): string {
  if (!/^[0-9a-fA-F]{32}$/.test(raw)) throw new BadRequestError('params/traceId: expected 32 hex characters')
  return raw.toLowerCase()
}
