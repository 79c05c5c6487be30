import { Readable } from 'node:stream'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findTeamProject } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerTeamId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { jsonLines, parquetChunks, parseCursor } from '../export/span-export.ts'
import { errorResponses, ProjectParamsSchema } from '@tracewell/api-schemas'
import { timeWindow } from './query-bounds.ts'

export const ExportQuerySchema = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'ISO 8601: spans that started at or after this instant, inclusive (default: the first)' })),
    to: Type.Optional(Type.String({ description: 'ISO 8601: spans that started before this instant, exclusive (default: now)' })),
    format: Type.Optional(Type.Union([Type.Literal('jsonl'), Type.Literal('parquet')], { default: 'jsonl', description: 'jsonl (OTLP/JSON lines, the default) or parquet' })),
    cursor: Type.Optional(Type.String({ maxLength: 100, description: 'resume after this span: `<startTimeUnixNano>_<traceId>_<spanId>` of the last one received' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'at most this many spans in the response (default: all)' })),
  },
  { additionalProperties: false },
)
export type ExportQuery = Static<typeof ExportQuerySchema>

const EXPORT_DESCRIPTION = `Streams the spans that started in [from, to), oldest first (by start, trace id, span id).
jsonl: one OTLP/JSON ExportTraceServiceRequest per line, one span each (application/x-ndjson). parquet: one file, a row per span,
attribute maps as JSON columns; when \`limit\` ends it before \`to\`, its key-value metadata \`tracewell.next_cursor\` says where to go on.
To resume, pass the last span's cursor.`

/** A project's spans streamed out as OTLP/JSON lines or Parquet (team key or console session). */
export const exportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/projects/:projectId/export',
    {
      onRequest: authorize,
      config: { permission: 'traces:export' },
      schema: {
        operationId: 'exportSpans',
        summary: 'Export a project’s spans as OTLP/JSON lines or Parquet',
        description: EXPORT_DESCRIPTION,
        tags: ['export'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        querystring: ExportQuerySchema,
        produces: ['application/x-ndjson', 'application/vnd.apache.parquet'],
        response: {
          // A stream, sent as it is read: the schema only documents it.
          200: Type.Unsafe<Readable>(Type.String({ description: 'application/x-ndjson or application/vnd.apache.parquet, streamed' })),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const project = await findTeamProject(app.db, callerTeamId(request), request.params.projectId)
      if (!project) throw new NotFoundError('Project not found')
      const { from, to, format = 'jsonl', cursor, limit } = request.query
      const after = cursor === undefined ? null : parseCursor(cursor)
      if (after === null && cursor !== undefined) throw new BadRequestError('querystring/cursor: expected <startTimeUnixNano>_<32 hex trace id>_<16 hex span id>')
      const bounds = timeWindow({ from, to })
      const window = { from: bounds.from ?? new Date(0), to: bounds.to ?? new Date(), after, limit: limit ?? Number.MAX_SAFE_INTEGER }
      const name = `${project.id}-spans.${format}`
      reply.header('content-disposition', `attachment; filename="${name}"`)
      if (format === 'parquet') return reply.type('application/vnd.apache.parquet').send(Readable.from(parquetChunks(app.db, project.id, window), { objectMode: false }))
      return reply.type('application/x-ndjson').send(Readable.from(jsonLines(app.db, project.id, window), { objectMode: false }))
    },
  )
}
