import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createDashboard, deleteDashboard, ensureDefaultDashboard, findDashboard, hasDefaultDashboard, listDashboards, updateDashboard, type DashboardDto } from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, ProjectScopeQuerySchema } from '@tracewell/api-schemas'
import { checkedWidgets } from '../dashboards/dashboard-widgets.ts'
import { widgetData, widgetGranularity } from '../dashboards/dashboard-data.ts'
import { DEFAULT_DASHBOARD_NAME, defaultDashboardWidgets } from '../dashboards/default-dashboard.ts'
import {
  DASHBOARD_DOCUMENT_FORMAT,
  DashboardBodySchema,
  DashboardDataQuerySchema,
  DashboardDataSchema,
  DashboardDocumentSchema,
  DashboardParamsSchema,
  DashboardSchema,
  type DashboardDocument,
} from '../dashboards/dashboard.schemas.ts'
import { parseIsoDate } from './trace-queries.routes.ts'

// Dashboards (docs/api.md#dashboards): a project's charts of the metrics monitors watch, read
// with a project key or a team key, changed with a team key or the console's session. Project keys
// ship inside applications; whoever holds one may read a project's figures, not rearrange its
// team's dashboards (requireSpendAccess's rule, though nothing here spends).

const dayMs = 86_400_000
const tags = ['dashboards']
const security = [{ apiKey: [] }]

/** Dashboards and their data. */
export const dashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function ownedDashboard(projectId: string, dashboardId: string): Promise<DashboardDto> {
    const dashboard = await findDashboard(app.db, projectId, dashboardId)
    if (dashboard === undefined) throw new NotFoundError('Dashboard not found')
    return dashboard
  }

  app.get(
    '/api/dashboards',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:read' },
      schema: {
        operationId: 'listDashboards',
        summary: 'The project’s dashboards, its default first',
        description: 'The first list of a project makes its default dashboard (the usage page as widgets).',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        response: { 200: Type.Object({ dashboards: Type.Array(DashboardSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      if (!(await hasDefaultDashboard(app.db, projectId))) {
        await ensureDefaultDashboard(app.db, { projectId, name: DEFAULT_DASHBOARD_NAME, widgets: [...defaultDashboardWidgets] })
      }
      return { dashboards: await listDashboards(app.db, projectId) }
    },
  )

  app.post(
    '/api/dashboards',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:write' },
      schema: {
        operationId: 'createDashboard',
        summary: 'Make a dashboard',
        description: 'Widgets without an id get one.',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        body: DashboardBodySchema,
        response: { 201: DashboardSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const widgets = checkedWidgets(request.body.widgets)
      return reply.code(201).send(await createDashboard(app.db, { projectId: callerProjectId(request), name: request.body.name, widgets }))
    },
  )

  app.post(
    '/api/dashboards/import',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:write' },
      schema: {
        operationId: 'importDashboard',
        summary: 'Make a dashboard from an exported document',
        description: 'The document GET /api/dashboards/{dashboardId}/export gives, from this project or another; never the default.',
        tags,
        security,
        querystring: ProjectScopeQuerySchema,
        body: DashboardDocumentSchema,
        response: { 201: DashboardSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const widgets = checkedWidgets(request.body.widgets)
      return reply.code(201).send(await createDashboard(app.db, { projectId: callerProjectId(request), name: request.body.name, widgets }))
    },
  )

  app.get(
    '/api/dashboards/:dashboardId',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:read' },
      schema: {
        operationId: 'getDashboard',
        summary: 'A dashboard and its widgets',
        tags,
        security,
        params: DashboardParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: DashboardSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ownedDashboard(callerProjectId(request), request.params.dashboardId),
  )

  app.put(
    '/api/dashboards/:dashboardId',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:write' },
      schema: {
        operationId: 'updateDashboard',
        summary: 'Replace a dashboard’s name and widgets',
        description: 'The default dashboard can be changed like any other.',
        tags,
        security,
        params: DashboardParamsSchema,
        querystring: ProjectScopeQuerySchema,
        body: DashboardBodySchema,
        response: { 200: DashboardSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const widgets = checkedWidgets(request.body.widgets)
      const dashboard = await updateDashboard(app.db, callerProjectId(request), request.params.dashboardId, { name: request.body.name, widgets })
      if (dashboard === undefined) throw new NotFoundError('Dashboard not found')
      return dashboard
    },
  )

  app.delete(
    '/api/dashboards/:dashboardId',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:write' },
      schema: {
        operationId: 'deleteDashboard',
        summary: 'Delete a dashboard (not the default)',
        tags,
        security,
        params: DashboardParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const outcome = await deleteDashboard(app.db, callerProjectId(request), request.params.dashboardId)
      if (outcome === 'missing') throw new NotFoundError('Dashboard not found')
      if (outcome === 'default') throw new ConflictError('The default dashboard cannot be deleted; change its widgets instead')
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/dashboards/:dashboardId/export',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:read' },
      schema: {
        operationId: 'exportDashboard',
        summary: 'A dashboard as a JSON document, for POST /api/dashboards/import',
        tags,
        security,
        params: DashboardParamsSchema,
        querystring: ProjectScopeQuerySchema,
        response: { 200: DashboardDocumentSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const dashboard = await ownedDashboard(callerProjectId(request), request.params.dashboardId)
      const document: DashboardDocument = {
        format: DASHBOARD_DOCUMENT_FORMAT,
        version: 1,
        exportedAt: new Date().toISOString(),
        name: dashboard.name,
        widgets: dashboard.widgets as DashboardDocument['widgets'],
      }
      // Saved as a file by a browser; the name is the dashboard's id, safe in a header as it is.
      return reply.header('content-disposition', `attachment; filename="dashboard-${dashboard.id}.json"`).send(document)
    },
  )

  app.get(
    '/api/dashboards/:dashboardId/data',
    {
      onRequest: authorize,
      config: { permission: 'dashboards:read' },
      schema: {
        operationId: 'getDashboardData',
        summary: 'Each widget’s series over a window',
        description: 'Read from the rollups and trace summaries (never spans), with the trace list’s filters. A number widget has one point: its figure over the whole window.',
        tags,
        security,
        params: DashboardParamsSchema,
        querystring: DashboardDataQuerySchema,
        response: { 200: DashboardDataSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const to = parseIsoDate('to', request.query.to) ?? new Date()
      const from = parseIsoDate('from', request.query.from) ?? new Date(to.getTime() - 7 * dayMs)
      if (from >= to) throw new BadRequestError('querystring/from: must be before to')
      const dashboard = await ownedDashboard(projectId, request.params.dashboardId)
      const wanted = request.query.widget_id
      const widgets = wanted === undefined ? dashboard.widgets : dashboard.widgets.filter((widget) => widget.id === wanted)
      if (widgets.length === 0 && wanted !== undefined) throw new NotFoundError(`The dashboard has no widget ${JSON.stringify(wanted)}`)
      // Every widget's window is checked before any query runs.
      const planned = widgets.map((widget) => ({ widget, granularity: widgetGranularity(widget, from, to) }))
      // One timed transaction, the widgets one after the other (timed-queries.ts).
      const data = await app.timedQuery(async (db) => {
        const answers = []
        for (const { widget, granularity } of planned) answers.push(await widgetData(db, projectId, widget, from, to, granularity))
        return answers
      })
      return { from: from.toISOString(), to: to.toISOString(), widgets: data }
    },
  )
}
