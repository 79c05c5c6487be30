import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findTraceSpans, listTraces, type TraceCursor } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerProjectId, requireProjectKey } from '../auth.ts'
import { errorResponses, IsoDateSchema } from '../schemas.ts'

export const TraceListQuerySchema = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'traces per page (1–500)' }),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601: traces starting at or after' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601: traces starting before' })),
})
export type TraceListQuery = Static<typeof TraceListQuerySchema>

export const TraceSummarySchema = Type.Object({
  traceId: Type.String(),
  name: Type.String(),
  serviceName: Type.Union([Type.String(), Type.Null()]),
  startTime: IsoDateSchema,
  endTime: IsoDateSchema,
  durationMs: Type.Number(),
  spanCount: Type.Integer(),
  models: Type.Array(Type.String()),
})
export const TraceListSchema = Type.Object({
  traces: Type.Array(TraceSummarySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next (older) page; null on the last' }),
})
export type TraceList = Static<typeof TraceListSchema>

export const TraceParamsSchema = Type.Object({ traceId: Type.String({ description: '32 hex characters (either case)' }) })
export type TraceParams = Static<typeof TraceParamsSchema>

const NullableString = Type.Union([Type.String(), Type.Null()])
const NullableInteger = Type.Union([Type.Integer(), Type.Null()])

/** A stored span with every field; attributes in the map form. */
export const SpanSchema = Type.Object({
  traceId: Type.String(),
  spanId: Type.String(),
  parentSpanId: NullableString,
  name: Type.String(),
  kind: Type.Integer(),
  startTime: IsoDateSchema,
  endTime: IsoDateSchema,
  startTimeUnixNano: Type.String(),
  endTimeUnixNano: Type.String(),
  durationNs: Type.String(),
  traceState: NullableString,
  status: Type.Object({ code: Type.Integer(), message: NullableString }),
  serviceName: NullableString,
  serviceVersion: NullableString,
  scopeName: NullableString,
  scopeVersion: NullableString,
  llmVendor: NullableString,
  llmModel: NullableString,
  llmRequestType: NullableString,
  inputTokens: NullableInteger,
  outputTokens: NullableInteger,
  totalTokens: NullableInteger,
  attributes: Type.Record(Type.String(), Type.Unknown()),
  resourceAttributes: Type.Record(Type.String(), Type.Unknown()),
  events: Type.Array(Type.Unknown()),
  links: Type.Array(Type.Unknown()),
  receivedAt: IsoDateSchema,
})
export const TraceSchema = Type.Object({ traceId: Type.String(), spans: Type.Array(SpanSchema) })
export type Trace = Static<typeof TraceSchema>

// The cursor is opaque to clients: base64url of the last trace's start (µs) and id.
export function encodeCursor(cursor: TraceCursor): string {
  return Buffer.from(`${cursor.startMicros}:${cursor.traceId}`).toString('base64url')
}

// A trace's start as this API can return it: from 0001-01-01 to 9999-12-31 (span times are
// unsigned nanoseconds since 1970, so real ones end in 2554). A hand-made cursor outside this
// range would overflow Postgres's bigint or timestamp arithmetic: a 500 instead of a 400.
const MIN_CURSOR_MICROS = -62_135_596_800_000_000n
const MAX_CURSOR_MICROS = 253_402_300_799_999_999n

export function decodeCursor(raw: string): TraceCursor {
  const match = /^(-?[0-9]{1,20}):([0-9a-f]{32})$/.exec(Buffer.from(raw, 'base64url').toString('latin1'))
  const startMicros = match ? BigInt(match[1] as string) : undefined
  if (!match || startMicros === undefined || startMicros < MIN_CURSOR_MICROS || startMicros > MAX_CURSOR_MICROS) {
    throw new BadRequestError('querystring/cursor: not a nextCursor returned by this API')
  }
  return { startMicros: startMicros.toString(), traceId: match[2] as string }
}

const isoDatePattern = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/

export function parseIsoDate(name: string, raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined
  const date = isoDatePattern.test(raw) ? new Date(raw) : undefined
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new BadRequestError(`querystring/${name}: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got ${JSON.stringify(raw)}`)
  }
  return date
}

/** Trace queries of the caller's project (project key), newest first. */
export const traceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/traces',
    {
      onRequest: requireProjectKey,
      schema: {
        summary: 'List traces, newest first, a page at a time',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        querystring: TraceListQuerySchema,
        response: { 200: TraceListSchema, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { limit, cursor, from, to } = request.query
      const page = await listTraces(app.db, {
        projectId: callerProjectId(request),
        limit,
        cursor: cursor === undefined || cursor === '' ? undefined : decodeCursor(cursor),
        from: parseIsoDate('from', from),
        to: parseIsoDate('to', to),
      })
      return { traces: page.traces, nextCursor: page.next === null ? null : encodeCursor(page.next) }
    },
  )

  app.get(
    '/api/traces/:traceId',
    {
      onRequest: requireProjectKey,
      schema: {
        summary: 'One trace with all its spans',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        params: TraceParamsSchema,
        response: { 200: TraceSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { traceId: raw } = request.params
      if (!/^[0-9a-fA-F]{32}$/.test(raw)) throw new BadRequestError('params/traceId: expected 32 hex characters')
      const traceId = raw.toLowerCase()
      const spans = await findTraceSpans(app.db, callerProjectId(request), traceId)
      if (spans.length === 0) throw new NotFoundError('Trace not found')
      return { traceId, spans }
    },
  )
}
