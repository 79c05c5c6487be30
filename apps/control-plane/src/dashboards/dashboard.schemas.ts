import { Type, type Static } from '@sinclair/typebox'
import { METRIC_GROUPS, METRICS } from '@tracewell/db'
import { IdSchema, IsoDateSchema, ScoreNameSchema, stringEnum, TraceFilterBodySchema } from '@tracewell/api-schemas'

// The shapes of the dashboard routes (docs/api.md#dashboards). A widget is one metric of the
// metric engine (metric-series.repository.ts, shared with monitors), drawn as a chart.

export const CHARTS = ['line', 'bar', 'table', 'number'] as const

/** The narrowest point a widget may ask for; the widest is a month (a series is bounded by its window, see dashboards.routes.ts). */
export const MIN_GRANULARITY_SECONDS = 60
export const MAX_GRANULARITY_SECONDS = 31 * 86_400

const WidgetIdSchema = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '1–64 of A-Z a-z 0-9 _ -, unique in its dashboard' })

const LayoutSchema = Type.Object(
  {
    x: Type.Integer({ minimum: 0, maximum: 1000, description: 'column of the left edge' }),
    y: Type.Integer({ minimum: 0, maximum: 100_000, description: 'row of the top edge' }),
    w: Type.Integer({ minimum: 1, maximum: 1000, description: 'width, in columns' }),
    h: Type.Integer({ minimum: 1, maximum: 1000, description: 'height, in rows' }),
  },
  { additionalProperties: false, description: 'where the console’s grid places the widget; kept as given' },
)

const widgetProperties = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  metric: stringEnum(METRICS, 'what the widget measures (docs/api.md#dashboards)'),
  scoreName: Type.Optional({ ...ScoreNameSchema, description: 'the score score_avg averages (required for score_avg unless grouped by score_name)' }),
  groupBy: Type.Optional(stringEnum(METRIC_GROUPS, 'one series per value of this; none: one series')),
  filter: Type.Optional(TraceFilterBodySchema),
  chart: stringEnum(CHARTS, 'line, bar, table or number'),
  granularity: Type.Optional(
    Type.Integer({
      minimum: MIN_GRANULARITY_SECONDS,
      maximum: MAX_GRANULARITY_SECONDS,
      description: 'seconds a point covers (60 – 31 days); none: the widest that gives at most 200 points over the window asked',
    }),
  ),
  layout: Type.Optional(LayoutSchema),
}

/** A widget as given: its id is assigned when absent. */
export const WidgetInputSchema = Type.Object({ id: Type.Optional(WidgetIdSchema), ...widgetProperties }, { additionalProperties: false })
export type WidgetInput = Static<typeof WidgetInputSchema>

export const WidgetSchema = Type.Object({ id: WidgetIdSchema, ...widgetProperties }, { additionalProperties: false })

const WidgetsSchema = Type.Array(WidgetInputSchema, { maxItems: 50, description: 'at most 50' })
const DashboardNameSchema = Type.String({ minLength: 1, maxLength: 200 })

export const DashboardBodySchema = Type.Object({ name: DashboardNameSchema, widgets: WidgetsSchema }, { additionalProperties: false })
export type DashboardBody = Static<typeof DashboardBodySchema>

export const DashboardSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  isDefault: Type.Boolean({ description: 'the project’s default dashboard (made on the first list; editable, never deleted)' }),
  widgets: Type.Array(WidgetSchema),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

export const DashboardParamsSchema = Type.Object({ dashboardId: IdSchema })

/** The export document; import takes it back, into any project. */
export const DASHBOARD_DOCUMENT_FORMAT = 'tracewell-dashboard'
export const DashboardDocumentSchema = Type.Object(
  {
    format: Type.Literal(DASHBOARD_DOCUMENT_FORMAT),
    version: Type.Literal(1),
    exportedAt: Type.Optional(IsoDateSchema),
    name: DashboardNameSchema,
    widgets: WidgetsSchema,
  },
  { additionalProperties: false, description: 'a dashboard as GET /api/dashboards/{dashboardId}/export gives it' },
)
export type DashboardDocument = Static<typeof DashboardDocumentSchema>

export const DashboardDataQuerySchema = Type.Object({
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key (a project key implies its own)' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive (default: `to` − 7 days); taken back to the start of its point' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive (default: now)' })),
  widget_id: Type.Optional({ ...WidgetIdSchema, description: 'only this widget' }),
})

const PointSchema = Type.Object({
  t: IsoDateSchema,
  value: Type.Union([Type.Number(), Type.Null()], { description: 'null: nothing to measure (a rate or average of no trace or score)' }),
})

export const DashboardDataSchema = Type.Object({
  from: IsoDateSchema,
  to: IsoDateSchema,
  widgets: Type.Array(
    Type.Object({
      id: Type.String(),
      granularity: Type.Integer({ description: 'seconds each point covers, from its t' }),
      series: Type.Array(
        Type.Object({
          group: Type.Union([Type.String(), Type.Null()], { description: 'the groupBy value; null without groupBy (or for traces without one)' }),
          points: Type.Array(PointSchema),
        }),
      ),
    }),
  ),
})
