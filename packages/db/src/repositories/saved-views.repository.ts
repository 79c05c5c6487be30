import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Saved views of the trace list (docs/collaboration.md#saved-views): filters, columns and sort
// under a name, private to their owner or shared with the project; one default per person.

export interface SavedViewDto {
  id: string
  name: string
  shared: boolean
  owner: { id: string; name: string }
  state: Record<string, unknown>
  isDefault: boolean
  createdAt: string
  updatedAt: string
}

function selectViews(db: Executor, userId: string) {
  return db
    .selectFrom('saved_views as v')
    .innerJoin('users as owner', 'owner.id', 'v.owner_user_id')
    .leftJoin('saved_view_defaults as d', (join) => join.onRef('d.view_id', '=', 'v.id').on('d.user_id', '=', userId))
    .select(['v.id', 'v.name', 'v.shared', 'v.owner_user_id', 'owner.name as owner_name', 'v.state', 'v.created_at', 'v.updated_at', 'd.view_id as default_view_id'])
}

type ViewRow = Awaited<ReturnType<ReturnType<typeof selectViews>['executeTakeFirstOrThrow']>>

function toViewDto(row: ViewRow): SavedViewDto {
  return {
    id: row.id,
    name: row.name,
    shared: row.shared,
    owner: { id: row.owner_user_id, name: row.owner_name },
    state: row.state,
    isDefault: row.default_view_id !== null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

/** The views `userId` sees in a project: their own and the shared ones, by name. */
export async function listSavedViews(db: Executor, projectId: string, userId: string): Promise<SavedViewDto[]> {
  const rows = await selectViews(db, userId)
    .where('v.project_id', '=', projectId)
    .where((eb) => eb.or([eb('v.owner_user_id', '=', userId), eb('v.shared', '=', true)]))
    .orderBy(sql`lower(v.name)`)
    .orderBy('v.id')
    .execute()
  return rows.map(toViewDto)
}

/** One view `userId` may see; undefined for another person's private view. */
export async function findSavedView(db: Executor, projectId: string, viewId: string, userId: string): Promise<SavedViewDto | undefined> {
  const row = await selectViews(db, userId)
    .where('v.project_id', '=', projectId)
    .where('v.id', '=', viewId)
    .where((eb) => eb.or([eb('v.owner_user_id', '=', userId), eb('v.shared', '=', true)]))
    .executeTakeFirst()
  return row && toViewDto(row)
}

export interface ViewSettings {
  name: string
  shared: boolean
  state: Record<string, unknown>
}

export async function createSavedView(db: Executor, projectId: string, ownerUserId: string, view: ViewSettings): Promise<SavedViewDto> {
  const { id } = await db
    .insertInto('saved_views')
    .values({ project_id: projectId, owner_user_id: ownerUserId, name: view.name, shared: view.shared, state: JSON.stringify(view.state) })
    .returning('id')
    .executeTakeFirstOrThrow()
  return (await findSavedView(db, projectId, id, ownerUserId)) as SavedViewDto
}

export async function updateSavedView(db: Executor, projectId: string, viewId: string, view: ViewSettings): Promise<void> {
  await db
    .updateTable('saved_views')
    .set({ name: view.name, shared: view.shared, state: JSON.stringify(view.state), updated_at: sql`now()` })
    .where('project_id', '=', projectId)
    .where('id', '=', viewId)
    .execute()
}

export async function deleteSavedView(db: Executor, projectId: string, viewId: string): Promise<boolean> {
  const result = await db.deleteFrom('saved_views').where('project_id', '=', projectId).where('id', '=', viewId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Makes a view the person's default in its project (or, with null, leaves them without one). */
export async function setDefaultSavedView(db: Executor, projectId: string, userId: string, viewId: string | null): Promise<void> {
  if (viewId === null) {
    await db.deleteFrom('saved_view_defaults').where('project_id', '=', projectId).where('user_id', '=', userId).execute()
    return
  }
  await db
    .insertInto('saved_view_defaults')
    .values({ project_id: projectId, user_id: userId, view_id: viewId })
    .onConflict((oc) => oc.columns(['user_id', 'project_id']).doUpdateSet({ view_id: viewId }))
    .execute()
}
