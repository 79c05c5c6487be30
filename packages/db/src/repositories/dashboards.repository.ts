import type { Executor } from './executor.ts'
import type { Metric, MetricGroup } from './metric-series.repository.ts'
import type { TraceFilterParams } from './trace-filter-params.ts'

// A project's dashboards: a name and its widgets, kept as one jsonb document (they are always read
// and written whole). Exactly one dashboard of each project is its default, made when the list is
// first read (the partial unique index dashboards_one_default_idx makes that insert happen once).

export interface DashboardWidgetLayout {
  x: number
  y: number
  w: number
  h: number
}

/** A widget as the API gives it: a metric of the metric engine (metric-series.repository.ts), drawn as a chart. */
export interface DashboardWidget {
  id: string
  title: string
  metric: Metric
  scoreName?: string | undefined
  groupBy?: MetricGroup | undefined
  filter?: TraceFilterParams | undefined
  chart: 'line' | 'bar' | 'table' | 'number'
  /** The width of a point, in seconds; by default the metric engine picks one for the window. */
  granularity?: number | undefined
  layout?: DashboardWidgetLayout | undefined
}

export interface DashboardDto {
  id: string
  projectId: string
  name: string
  widgets: DashboardWidget[]
  isDefault: boolean
  createdAt: string
  updatedAt: string
}

interface DashboardRow {
  id: string
  project_id: string
  name: string
  widgets: unknown[]
  is_default: boolean
  created_at: Date
  updated_at: Date
}

function toDashboardDto(row: DashboardRow): DashboardDto {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    // jsonb arrives parsed from pg and PGlite; only this module writes it, always as DashboardWidget[].
    widgets: row.widgets as DashboardWidget[],
    isDefault: row.is_default,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export interface NewDashboard {
  projectId: string
  name: string
  widgets: DashboardWidget[]
}

export async function createDashboard(db: Executor, dashboard: NewDashboard): Promise<DashboardDto> {
  const row = await db
    .insertInto('dashboards')
    .values({ project_id: dashboard.projectId, name: dashboard.name, widgets: JSON.stringify(dashboard.widgets) })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toDashboardDto(row as unknown as DashboardRow)
}

/**
 * Makes the project's default dashboard unless it has one; safe to race: of concurrent calls one
 * inserts, the others do nothing (dashboards_one_default_idx).
 */
export async function ensureDefaultDashboard(db: Executor, dashboard: NewDashboard): Promise<void> {
  await db
    .insertInto('dashboards')
    .values({ project_id: dashboard.projectId, name: dashboard.name, widgets: JSON.stringify(dashboard.widgets), is_default: true })
    .onConflict((conflict) => conflict.column('project_id').where('is_default', '=', true).doNothing())
    .execute()
}

export async function hasDefaultDashboard(db: Executor, projectId: string): Promise<boolean> {
  const row = await db.selectFrom('dashboards').select('id').where('project_id', '=', projectId).where('is_default', '=', true).executeTakeFirst()
  return row !== undefined
}

/** A project's dashboards: the default first, then by creation. */
export async function listDashboards(db: Executor, projectId: string): Promise<DashboardDto[]> {
  const rows = await db
    .selectFrom('dashboards')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('is_default', 'desc')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((row) => toDashboardDto(row as unknown as DashboardRow))
}

export async function findDashboard(db: Executor, projectId: string, id: string): Promise<DashboardDto | undefined> {
  const row = await db.selectFrom('dashboards').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toDashboardDto(row as unknown as DashboardRow)
}

/** Replaces its name and widgets; undefined when the project has no such dashboard. */
export async function updateDashboard(db: Executor, projectId: string, id: string, change: { name: string; widgets: DashboardWidget[] }): Promise<DashboardDto | undefined> {
  const row = await db
    .updateTable('dashboards')
    .set({ name: change.name, widgets: JSON.stringify(change.widgets), updated_at: new Date() })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row === undefined ? undefined : toDashboardDto(row as unknown as DashboardRow)
}

/** Deletes a dashboard other than the default: 'deleted', 'missing', or 'default' (kept). */
export async function deleteDashboard(db: Executor, projectId: string, id: string): Promise<'deleted' | 'missing' | 'default'> {
  const result = await db.deleteFrom('dashboards').where('project_id', '=', projectId).where('id', '=', id).where('is_default', '=', false).executeTakeFirst()
  if (result.numDeletedRows > 0n) return 'deleted'
  return (await findDashboard(db, projectId, id)) === undefined ? 'missing' : 'default'
}
