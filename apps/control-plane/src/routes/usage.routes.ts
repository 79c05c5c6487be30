import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { scoreAverages, usageOf } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, includeTracewellCallsProperty, UsageSchema } from '@tracewell/api-schemas'
import { parseIsoDate } from './trace-queries.routes.ts'

const UsageQuerySchema = Type.Object({
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive (default: `to` − 30 days)' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive (default: now)' })),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day' }),
  tz: Type.String({ default: 'UTC', maxLength: 64, description: 'IANA time zone the buckets are days or hours of' }),
  group_by: Type.Optional(Type.Union([Type.Literal('model'), Type.Literal('vendor'), Type.Literal('service'), Type.Literal('user')])),
  ...includeTracewellCallsProperty,
})

const dayMs = 24 * 3600_000
// Bounds one answer: 31 days of hours, or ten years of days.
const maxBuckets = 744
const maxDayBuckets = 3660

function assertTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz })
  } catch {
    throw new BadRequestError(`querystring/tz: not a time zone: ${JSON.stringify(tz)}`)
  }
}

/** Usage of a project over time: totals and a series, optionally by model, vendor, service or user. */
export const usageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/usage',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'getUsage',
        summary: 'Traces, spans, errors, tokens, cost and LLM latency over time',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        querystring: UsageQuerySchema,
        response: {
          200: UsageSchema,
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const { bucket, tz, group_by: groupBy, include_tracewell_calls: includeTracewellCalls } = request.query
      assertTimeZone(tz)
      const to = parseIsoDate('to', request.query.to) ?? new Date()
      const from = parseIsoDate('from', request.query.from) ?? new Date(to.getTime() - 30 * dayMs)
      if (from >= to) throw new BadRequestError('querystring/from: must be before to')
      const buckets = (to.getTime() - from.getTime()) / (bucket === 'hour' ? 3600_000 : dayMs)
      if (buckets > (bucket === 'hour' ? maxBuckets : maxDayBuckets)) {
        throw new BadRequestError(`querystring/from: at most ${bucket === 'hour' ? maxBuckets : maxDayBuckets} ${bucket}s in one answer`)
      }
      const projectId = callerProjectId(request)
      // One timed transaction, its queries one after the other (timed-queries.ts).
      const { usage, scores } = await app.timedQuery(async (db) => ({
        usage: await usageOf(db, { projectId, from, to, bucket, timeZone: tz, groupBy, includeTracewellCalls }),
        scores: await scoreAverages(db, { projectId, from, to, bucket, timeZone: tz }),
      }))
      return { ...usage, scores }
    },
  )
}
