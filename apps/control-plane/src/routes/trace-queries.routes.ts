import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { countTraceComments, deleteTrace, findTraceSpans, findTraceSpansJson, hasSearchableWord, scoresOfTraces, searchTraces, type TraceSearchCursor, type TraceSort } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { toOtlpJson } from '../otlp-export.ts'
import { errorResponses, IsoDateSchema, ProjectScopeQuerySchema, ScoreSchema } from '@tracewell/api-schemas'
import { toScore } from '../scores/to-score.ts'
import { StoredSpanSchema } from '@tracewell/span-schema'
import { includeTracewellCallsProperty } from './tracewell-calls.query.ts'
import { figureBoundProperties, figureBounds, parseIsoDate, timeWindow } from './query-bounds.ts'

const ProjectScope = {
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key (a project key implies its own)' })),
}

export const TraceListQuerySchema = Type.Object({
  ...ProjectScope,
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'traces per page (1–500)' }),
  cursor: Type.Optional(Type.String({ maxLength: 300, description: 'nextCursor of the previous page' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601: traces starting at or after (inclusive)' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601: traces starting before (exclusive)' })),
  service: Type.Optional(Type.String({ maxLength: 500, description: 'a span of the trace has this service.name' })),
  model: Type.Optional(Type.String({ maxLength: 500, description: 'an LLM span of the trace used this model' })),
  vendor: Type.Optional(Type.String({ maxLength: 500, description: 'an LLM span of the trace called this vendor' })),
  status: Type.Optional(Type.Union([Type.Literal('error'), Type.Literal('ok')], { description: 'error: a span failed; ok: none did' })),
  name: Type.Optional(Type.String({ maxLength: 500, description: 'contained in the root span’s name or any span’s (case-insensitive)' })),
  attr: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 10, description: 'key=value on a span’s or its resource’s attributes (repeatable; all must hold)' })),
  session: Type.Optional(Type.String({ maxLength: 500, description: 'session id' })),
  user: Type.Optional(Type.String({ maxLength: 500, description: 'user id' })),
  ...figureBoundProperties,
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'text contained in a span’s attributes: prompts, completions (case-insensitive), its words as whole words; must hold a word (letters or digits)',
    }),
  ),
  score_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the trace has a score of this name (what min_score, max_score, score_value and sort=score apply to)' })),
  min_score: Type.Optional(Type.Number({ minimum: -1e12, maximum: 1e12, description: 'with score_name: a score of that name at least this (its number: the value, 1/0, or the category’s value)' })),
  max_score: Type.Optional(Type.Number({ minimum: -1e12, maximum: 1e12, description: 'with score_name: a score of that name at most this' })),
  score_value: Type.Optional(Type.String({ maxLength: 200, description: 'with score_name: a score of that name with this label (a category, or true/false)' })),
  sort: Type.Union([Type.Literal('time'), Type.Literal('duration'), Type.Literal('cost'), Type.Literal('tokens'), Type.Literal('score')], {
    default: 'time',
    description:
      'cost, tokens: traces of unknown cost or tokens (null) come last in either order; score: the average of the trace’s score_name scores (with score_name, only traces that have one are listed)',
  }),
  order: Type.Union([Type.Literal('desc'), Type.Literal('asc')], { default: 'desc' }),
  ...includeTracewellCallsProperty,
})
export type TraceListQuery = Static<typeof TraceListQuerySchema>

export const TraceRowSchema = Type.Object({
  traceId: Type.String(),
  name: Type.String({ description: 'the root span’s name (the earliest span’s until the root arrives)' }),
  serviceName: Type.Union([Type.String(), Type.Null()]),
  startTime: IsoDateSchema,
  endTime: IsoDateSchema,
  durationMs: Type.Number(),
  spanCount: Type.Integer(),
  errorCount: Type.Integer(),
  models: Type.Array(Type.String()),
  inputTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'the sum of the counts the spans reported; null when none reported one (unknown, not 0)' }),
  outputTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'as inputTokens' }),
  totalTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'as inputTokens; a span without a total counts its input and output' }),
  costUsd: Type.Union([Type.Number(), Type.Null()], { description: 'null when no span of the trace could be priced' }),
  tokensEstimated: Type.Boolean({ description: 'a span’s token counts are estimates (spans[].tokensEstimated): the tokens and the cost are not exact' }),
  sessionId: Type.Union([Type.String(), Type.Null()]),
  userId: Type.Union([Type.String(), Type.Null()]),
  scores: Type.Array(ScoreSchema, { description: 'the trace’s scores (and its spans’), oldest first' }),
})
export const TraceListSchema = Type.Object({
  traces: Type.Array(Type.Object({ ...TraceRowSchema.properties, commentCount: Type.Integer({ description: 'comments on the trace (docs/collaboration.md#comments)' }) })),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next page; null on the last' }),
})
export type TraceList = Static<typeof TraceListSchema>

export { ProjectScopeQuerySchema }

export const TraceParamsSchema = Type.Object({ traceId: Type.String({ description: '32 hex characters (either case)' }) })
export type TraceParams = Static<typeof TraceParamsSchema>


/** A stored span with every field; attributes in the map form (the one definition, @tracewell/span-schema). */
export const SpanSchema = StoredSpanSchema
export const TraceSchema = Type.Object({
  traceId: Type.String(),
  spans: Type.Array(SpanSchema),
  scores: Type.Array(ScoreSchema, { description: 'the trace’s scores and its spans’ (spanId set), oldest first' }),
})
export type Trace = Static<typeof TraceSchema>

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
