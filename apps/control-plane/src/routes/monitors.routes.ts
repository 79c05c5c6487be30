import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  breachesThreshold,
  createMonitor,
  deleteMonitor,
  findMonitor,
  listMonitorEvents,
  listMonitors,
  metricQueryProblem,
  metricSeries,
  missingChannelIds,
  MONITOR_METRICS,
  replaceMonitor,
  type MonitorDto,
  type MonitorMetric,
  type MonitorSettings,
  type TraceFilterParams,
} from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, IdSchema, IsoDateSchema, ProjectScopeQuerySchema, ScoreNameSchema, TraceFilterBodySchema } from '@tracewell/api-schemas'
import { parseIsoDate } from './trace-queries.routes.ts'
import { checkTraceFilter } from './trace-filter-body.ts'

// Monitors (docs/api.md#monitors, issue 45 §1): a metric of the project over a window against a
// threshold, evaluated by the evaluator worker every evaluateEverySeconds; its state changes are
// its history and what the notification channels are sent. Reading takes a project key too;
// making, changing and deleting one takes a team key or the console's session, as spending does:
// a monitor decides who is messaged, which a key shipped inside an application must not.

// An enum rather than a union of literals: a wrong metric is answered "one of the allowed values", not "a constant".
const MetricSchema = Type.Unsafe<MonitorMetric>({
  type: 'string',
  enum: [...MONITOR_METRICS],
  description: 'error_rate (share of traces with an error), latency_p50/p95/p99 (trace duration, ms), cost (USD), tokens, traces, score_avg (with scoreName), judge_failure_rate',
})
const OperatorSchema = Type.Union([Type.Literal('>'), Type.Literal('>='), Type.Literal('<'), Type.Literal('<=')])
const StateSchema = Type.Union([Type.Literal('ok'), Type.Literal('alerting'), Type.Literal('no_data')])
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

/** Budgets notify at these shares of the threshold unless told otherwise. */
const DEFAULT_BUDGET_PERCENTS = [50, 80, 100]
/** The metrics a calendar month sums (a budget). */
const MONTHLY_METRICS: ReadonlySet<string> = new Set(['cost', 'tokens', 'traces'])

const MonitorBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    metric: MetricSchema,
    scoreName: Type.Optional(ScoreNameSchema),
    filter: Type.Optional(TraceFilterBodySchema),
    windowSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 31 * 86_400, description: 'the rolling window the metric is read over, ending at each evaluation' })),
    window: Type.Optional(Type.Literal('calendar_month', { description: 'instead of windowSeconds: the UTC calendar month to date (a monthly budget)' })),
    operator: OperatorSchema,
    threshold: Type.Number({ minimum: -1e15, maximum: 1e15 }),
    evaluateEverySeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400, default: 60 })),
    channelIds: Type.Array(IdSchema, { maxItems: 20, uniqueItems: true, description: 'notification channels of the project told of each change' }),
    renotifyAfterSeconds: Type.Optional(Nullable(Type.Integer({ minimum: 60, maximum: 30 * 86_400, description: 'notify again this long after the last notification while still alerting' }))),
    mutedUntil: Type.Optional(Nullable(Type.String({ description: 'ISO 8601: until then changes are recorded, nobody is notified' }))),
    budgetPercents: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), {
        minItems: 1,
        maxItems: 10,
        uniqueItems: true,
        description: 'window calendar_month only: notify once a month at each of these shares of the threshold (default 50, 80, 100; 100 is the alert itself)',
      }),
    ),
  },
  { additionalProperties: false },
)
type MonitorBody = Static<typeof MonitorBodySchema>

const MonitorSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  metric: MetricSchema,
  scoreName: Nullable(Type.String()),
  filter: Type.Record(Type.String(), Type.Unknown()),
  window: Type.Union([Type.Literal('rolling'), Type.Literal('calendar_month')]),
  windowSeconds: Nullable(Type.Integer()),
  operator: OperatorSchema,
  threshold: Type.Number(),
  evaluateEverySeconds: Type.Integer(),
  channelIds: Type.Array(Type.String()),
  renotifyAfterSeconds: Nullable(Type.Integer()),
  mutedUntil: Nullable(IsoDateSchema),
  budgetPercents: Nullable(Type.Array(Type.Integer())),
  state: StateSchema,
  stateValue: Nullable(Type.Number({ description: 'the value that made the last change of state' })),
  stateChangedAt: Nullable(IsoDateSchema),
  lastValue: Nullable(Type.Number({ description: 'the value at the last evaluation (null: no data)' })),
  lastEvaluatedAt: Nullable(IsoDateSchema),
  nextEvaluationAt: IsoDateSchema,
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

const MonitorEventSchema = Type.Object({
  id: Type.String(),
  monitorId: Type.String(),
  kind: Type.Union([Type.Literal('alerting'), Type.Literal('resolved'), Type.Literal('no_data'), Type.Literal('renotify'), Type.Literal('budget')]),
  state: StateSchema,
  value: Nullable(Type.Number()),
  threshold: Type.Number({ description: 'the threshold, or for a budget step its share of it' }),
  window: Type.Object({ from: IsoDateSchema, to: IsoDateSchema }),
  channelIds: Type.Array(Type.String(), { description: 'the channels notified; empty: recorded only (muted, or ok ↔ no data)' }),
  createdAt: IsoDateSchema,
})

const MonitorParamsSchema = Type.Object({ monitorId: IdSchema })

/** A monitor as the API shows it (its filter as the parameters given). */
const shown = (monitor: MonitorDto) => ({ ...monitor, filter: monitor.filter as Record<string, unknown> })

/** The body as stored settings, or a 400 naming the field. */
async function settingsOf(db: Parameters<typeof missingChannelIds>[0], projectId: string, body: MonitorBody): Promise<MonitorSettings> {
  if ((body.windowSeconds === undefined) === (body.window === undefined)) {
    throw new BadRequestError('body/windowSeconds: give either windowSeconds (a rolling window) or window: "calendar_month" (a monthly budget)')
  }
  const monthly = body.window === 'calendar_month'
  if (monthly && !MONTHLY_METRICS.has(body.metric)) throw new BadRequestError(`body/window: calendar_month sums cost, tokens or traces over the month, not ${body.metric}`)
  if (!monthly && body.budgetPercents !== undefined) throw new BadRequestError('body/budgetPercents: only with window: "calendar_month"')
  if (monthly && !(body.threshold > 0)) throw new BadRequestError('body/threshold: a monthly budget must be above 0')
  const problem = metricQueryProblem({ metric: body.metric, scoreName: body.scoreName })
  if (problem !== null) throw new BadRequestError(`body/${problem}`)
  const filter = (body.filter ?? {}) as TraceFilterParams
  checkTraceFilter(filter)
  const missing = await missingChannelIds(db, projectId, body.channelIds)
  const unknown = missing?.[0]
  if (unknown !== undefined) throw new BadRequestError(`body/channelIds/${body.channelIds.indexOf(unknown)}: no notification channel ${JSON.stringify(unknown)} in this project`)
  return {
    name: body.name,
    metric: body.metric,
    scoreName: body.scoreName ?? null,
    filter,
    window: monthly ? 'calendar_month' : 'rolling',
    windowSeconds: body.windowSeconds ?? null,
    operator: body.operator,
    threshold: body.threshold,
    evaluateEverySeconds: body.evaluateEverySeconds ?? 60,
    channelIds: body.channelIds,
    renotifyAfterSeconds: body.renotifyAfterSeconds ?? null,
    mutedUntil: body.mutedUntil === undefined || body.mutedUntil === null ? null : (parseIsoDate('mutedUntil', body.mutedUntil, 'body') as Date),
    budgetPercents: monthly ? [...(body.budgetPercents ?? DEFAULT_BUDGET_PERCENTS)].sort((a, b) => a - b) : null,
  }
}

const common = { tags: ['monitors'], security: [{ apiKey: [] }], querystring: ProjectScopeQuerySchema }

const PreviewBodySchema = Type.Object(
  {
    metric: MetricSchema,
    scoreName: Type.Optional(ScoreNameSchema),
    filter: Type.Optional(TraceFilterBodySchema),
    windowSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 31 * 86_400 })),
    window: Type.Optional(Type.Literal('calendar_month')),
    operator: Type.Optional(OperatorSchema),
    threshold: Type.Optional(Type.Number({ minimum: -1e15, maximum: 1e15 })),
  },
  { additionalProperties: false, description: 'a monitor’s body, or as much of it as the form holds (metric at least)' },
)

const PreviewSchema = Type.Object({
  granularitySeconds: Type.Integer({ description: 'the width of a point' }),
  points: Type.Array(
    Type.Object({
      t: IsoDateSchema,
      value: Nullable(Type.Number()),
      breaches: Nullable(Type.Boolean({ description: 'value <operator> threshold (null without both, or without a value)' })),
    }),
  ),
})

const PREVIEW_MS = 86_400_000

/**
 * The points of a preview: for a rolling window, the metric in buckets of the window's width (5
 * minutes to an hour) over the last day — what the monitor would have read at each bucket's end;
 * for a calendar month, the month to date, day by day, as running totals against the budget.
 */
function previewWindow(body: Static<typeof PreviewBodySchema>, now: Date): { from: Date; granularitySeconds: number; running: boolean } {
  if (body.window === 'calendar_month') return { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), granularitySeconds: 86_400, running: true }
  const width = Math.min(3600, Math.max(300, body.windowSeconds ?? 300))
  return { from: new Date(now.getTime() - PREVIEW_MS), granularitySeconds: width, running: false }
}

export const monitorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/monitors',
    {
      onRequest: authorize,
      config: { permission: 'monitors:write' },
      schema: {
        ...common,
        operationId: 'createMonitor',
        summary: 'Watch a metric of the project against a threshold; notify its channels when it alerts and resolves',
        body: MonitorBodySchema,
        response: { 201: MonitorSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const projectId = callerProjectId(request)
      return reply.code(201).send(shown(await createMonitor(app.db, projectId, await settingsOf(app.db, projectId, request.body))))
    },
  )

  app.get(
    '/api/monitors',
    {
      onRequest: authorize,
      config: { permission: 'monitors:read' },
      schema: {
        ...common,
        operationId: 'listMonitors',
        summary: 'The project’s monitors with their states, oldest first',
        response: { 200: Type.Object({ monitors: Type.Array(MonitorSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ({ monitors: (await listMonitors(app.db, callerProjectId(request))).map(shown) }),
  )

  app.get(
    '/api/monitors/:monitorId',
    {
      onRequest: authorize,
      config: { permission: 'monitors:read' },
      schema: { ...common, operationId: 'getMonitor', summary: 'One monitor with its state', params: MonitorParamsSchema, response: { 200: MonitorSchema, ...errorResponses(400, 401, 404) } },
    },
    async (request) => {
      const monitor = await findMonitor(app.db, callerProjectId(request), request.params.monitorId)
      if (monitor === undefined) throw new NotFoundError('Monitor not found')
      return shown(monitor)
    },
  )

  app.put(
    '/api/monitors/:monitorId',
    {
      onRequest: authorize,
      config: { permission: 'monitors:write' },
      schema: {
        ...common,
        operationId: 'replaceMonitor',
        summary: 'Replace a monitor’s settings (its state stays; it is evaluated again at once)',
        params: MonitorParamsSchema,
        body: MonitorBodySchema,
        response: { 200: MonitorSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      if ((await findMonitor(app.db, projectId, request.params.monitorId)) === undefined) throw new NotFoundError('Monitor not found')
      const monitor = await replaceMonitor(app.db, projectId, request.params.monitorId, await settingsOf(app.db, projectId, request.body))
      if (monitor === undefined) throw new NotFoundError('Monitor not found')
      return shown(monitor)
    },
  )

  app.delete(
    '/api/monitors/:monitorId',
    {
      onRequest: authorize,
      config: { permission: 'monitors:write' },
      schema: {
        ...common,
        operationId: 'deleteMonitor',
        summary: 'Delete a monitor and its history',
        params: MonitorParamsSchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteMonitor(app.db, callerProjectId(request), request.params.monitorId))) throw new NotFoundError('Monitor not found')
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/monitors/preview',
    {
      onRequest: authorize,
      config: { permission: 'monitors:read' },
      schema: {
        ...common,
        operationId: 'previewMonitor',
        summary: 'The metric a monitor would watch over the last day (a month to date for a budget), against its threshold',
        body: PreviewBodySchema,
        response: { 200: PreviewSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const body = request.body
      if (body.window !== undefined && !MONTHLY_METRICS.has(body.metric)) throw new BadRequestError(`body/window: calendar_month sums cost, tokens or traces over the month, not ${body.metric}`)
      const problem = metricQueryProblem({ metric: body.metric, scoreName: body.scoreName })
      if (problem !== null) throw new BadRequestError(`body/${problem}`)
      const filter = (body.filter ?? {}) as TraceFilterParams
      checkTraceFilter(filter)
      const now = new Date()
      const { from, granularitySeconds, running } = previewWindow(body, now)
      const { series } = await metricSeries(app.db, { projectId: callerProjectId(request), metric: body.metric, scoreName: body.scoreName, filter, from, to: now, granularitySeconds })
      let total = 0
      const points = (series[0]?.points ?? []).map(({ t, value }) => {
        const shown = running && value !== null ? (total += value) : value
        const breaches = shown === null || body.operator === undefined || body.threshold === undefined ? null : breachesThreshold(shown, body.operator, body.threshold)
        return { t, value: shown, breaches }
      })
      return { granularitySeconds, points }
    },
  )

  app.get(
    '/api/monitors/:monitorId/history',
    {
      onRequest: authorize,
      config: { permission: 'monitors:read' },
      schema: {
        ...common,
        operationId: 'listMonitorHistory',
        summary: 'A monitor’s state changes, renotifications and budget steps, newest first',
        params: MonitorParamsSchema,
        querystring: Type.Object({ ...ProjectScopeQuerySchema.properties, limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) }),
        response: { 200: Type.Object({ events: Type.Array(MonitorEventSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      if ((await findMonitor(app.db, projectId, request.params.monitorId)) === undefined) throw new NotFoundError('Monitor not found')
      return { events: await listMonitorEvents(app.db, projectId, request.params.monitorId, request.query.limit) }
    },
  )
}
