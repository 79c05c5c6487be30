import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { metricQueryProblem, MONITOR_METRICS, type TraceFilterParams } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'
import { callerProjectId, requireProjectAccess } from '../auth.ts'
import { errorResponses } from '../schemas.ts'
import { widgetData, widgetGranularity } from '../dashboards/dashboard-data.ts'
import { DashboardDataSchema } from '../dashboards/dashboard.schemas.ts'
import { stringEnum } from '../scores/score.schemas.ts'
import { ScoreNameSchema } from './score-configs.routes.ts'
import { checkTraceFilter, TraceFilterBodySchema } from './trace-filter-body.ts'
import { parseIsoDate, ProjectScopeQuerySchema } from './trace-queries.routes.ts'

// The series of a monitor's metric before it is saved (docs/api.md#monitors): what the console's
// monitor form charts against the threshold. The dashboards' metric engine answers it, as it
// answers a widget, so the preview is the figure the evaluator will read.

const dayMs = 86_400_000

const PreviewBodySchema = Type.Object(
  {
    metric: stringEnum(MONITOR_METRICS, 'a monitor metric (docs/api.md#monitors)'),
    scoreName: Type.Optional(ScoreNameSchema),
    filter: Type.Optional(TraceFilterBodySchema),
    from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive (default: `to` − 1 day)' })),
    to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive (default: now)' })),
  },
  { additionalProperties: false },
)

const PreviewSchema = DashboardDataSchema.properties.widgets.items

export const monitorPreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/monitors/preview',
    {
      onRequest: requireProjectAccess,
      schema: {
        operationId: 'previewMonitorMetric',
        summary: 'A monitor metric’s series over a window, before the monitor is saved',
        description: 'Reads, changes nothing: the metric engine of dashboards and monitors over [from, to), points of the width a dashboard would pick. `id` is always "preview".',
        tags: ['monitors'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        body: PreviewBodySchema,
        response: { 200: PreviewSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const { metric, scoreName, filter } = request.body
      const to = parseIsoDate('to', request.body.to, 'body') ?? new Date()
      const from = parseIsoDate('from', request.body.from, 'body') ?? new Date(to.getTime() - dayMs)
      if (from >= to) throw new BadRequestError('body/from: must be before to')
      const problem = metricQueryProblem({ metric, scoreName })
      if (problem !== null) throw new BadRequestError(`body/${problem}`)
      if (filter !== undefined) checkTraceFilter(filter as TraceFilterParams)
      const widget = { id: 'preview', title: 'preview', metric, scoreName, filter: filter as TraceFilterParams | undefined, chart: 'line' as const }
      const granularity = widgetGranularity(widget, from, to)
      return app.timedQuery((db) => widgetData(db, projectId, widget, from, to, granularity))
    },
  )
}
