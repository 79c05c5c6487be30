import { sql } from 'kysely'
import { inTransaction, type Executor } from './executor.ts'

// Datasets and their items, versioned (the datasets-experiments migration): every change to the
// items raises the dataset's version by one inside one transaction that holds the dataset's row,
// so versions are gapless and two concurrent changes never claim the same one. Items are never
// updated in place: a replaced or deleted item's row is closed at the new version, so every
// earlier version can still be read back whole.

export interface DatasetDto {
  id: string
  projectId: string
  name: string
  description: string
  metadata: Record<string, unknown>
  /** The current version: 0 until the first item is added, then one more per change. */
  version: number
  /** Items in the current version. */
  itemCount: number
  createdAt: string
  updatedAt: string
}

export interface DatasetItemDto {
  id: string
  datasetId: string
  input: unknown
  expectedOutput: unknown
  metadata: Record<string, unknown> | null
  sourceTraceId: string | null
  sourceSpanId: string | null
  /** The version that added this form of the item. */
  validFrom: number
  /** The version that replaced or deleted it; null while current. */
  validTo: number | null
  createdAt: string
}

export interface NewDatasetItem {
  /** The caller's id: an item of that id in the current version is replaced. */
  id: string
  input: unknown
  expectedOutput: unknown
  metadata: Record<string, unknown> | null
  sourceTraceId: string | null
  sourceSpanId: string | null
}

/** Postgres's unique_violation for a second dataset of one name in a project. */
export const DATASET_EXISTS = 'datasets_name_unique'

interface DatasetRow {
  id: string
  project_id: string
  name: string
  description: string
  metadata: Record<string, unknown>
  version: number
  created_at: Date
  updated_at: Date
  item_count?: number | string
}

const toDataset = (row: DatasetRow): DatasetDto => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  description: row.description,
  metadata: row.metadata,
  version: row.version,
  itemCount: Number(row.item_count ?? 0),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
})

interface ItemRow {
  dataset_id: string
  id: string
  valid_from: number
  valid_to: number | null
  position: number
  input: unknown
  expected_output: unknown
  metadata: Record<string, unknown> | null
  source_trace_id: string | null
  source_span_id: string | null
  created_at: Date
}

const toItem = (row: ItemRow): DatasetItemDto => ({
  id: row.id,
  datasetId: row.dataset_id,
  input: row.input,
  expectedOutput: row.expected_output ?? null,
  metadata: row.metadata,
  sourceTraceId: row.source_trace_id,
  sourceSpanId: row.source_span_id,
  validFrom: row.valid_from,
  validTo: row.valid_to,
  createdAt: row.created_at.toISOString(),
})

const currentItemCount = sql<number>`(select count(*) from dataset_items i where i.dataset_id = datasets.id and i.valid_to is null)`

export async function createDataset(db: Executor, dataset: { projectId: string; name: string; description: string; metadata: Record<string, unknown> }): Promise<DatasetDto> {
  const row = await db
    .insertInto('datasets')
    .values({ project_id: dataset.projectId, name: dataset.name, description: dataset.description, metadata: JSON.stringify(dataset.metadata) })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toDataset(row)
}

/** The project's datasets, newest first, with their current item counts. */
export async function listDatasets(db: Executor, projectId: string): Promise<DatasetDto[]> {
  const rows = await db
    .selectFrom('datasets')
    .selectAll()
    .select(currentItemCount.as('item_count'))
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()
  return rows.map(toDataset)
}

export async function findDataset(db: Executor, projectId: string, id: string): Promise<DatasetDto | undefined> {
  const row = await db.selectFrom('datasets').selectAll().select(currentItemCount.as('item_count')).where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toDataset(row)
}

/** The items of one version of the dataset, in their order; a page of them with `page`. */
export async function listDatasetItems(db: Executor, datasetId: string, version: number, page?: { limit: number; offset: number }): Promise<DatasetItemDto[]> {
  let query = db
    .selectFrom('dataset_items')
    .selectAll()
    .where('dataset_id', '=', datasetId)
    .where('valid_from', '<=', version)
    .where((eb) => eb.or([eb('valid_to', 'is', null), eb('valid_to', '>', version)]))
    .orderBy('position')
  if (page !== undefined) query = query.limit(page.limit).offset(page.offset)
  return (await query.execute()).map(toItem)
}

/** How many items a version of the dataset has. */
export async function countDatasetItems(db: Executor, datasetId: string, version: number): Promise<number> {
  const { count } = await db
    .selectFrom('dataset_items')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('dataset_id', '=', datasetId)
    .where('valid_from', '<=', version)
    .where((eb) => eb.or([eb('valid_to', 'is', null), eb('valid_to', '>', version)]))
    .executeTakeFirstOrThrow()
  return Number(count)
}

/** One item as it is in the given version; undefined when it is not in that version. */
export async function findDatasetItem(db: Executor, datasetId: string, itemId: string, version: number): Promise<DatasetItemDto | undefined> {
  const row = await db
    .selectFrom('dataset_items')
    .selectAll()
    .where('dataset_id', '=', datasetId)
    .where('id', '=', itemId)
    .where('valid_from', '<=', version)
    .where((eb) => eb.or([eb('valid_to', 'is', null), eb('valid_to', '>', version)]))
    .executeTakeFirst()
  return row === undefined ? undefined : toItem(row)
}

/** Takes the next version of the dataset, holding its row until the transaction ends. */
async function nextVersion(trx: Executor, datasetId: string): Promise<number> {
  const { rows } = await sql<{ version: number }>`
    update datasets set version = version + 1, updated_at = now() where id = ${datasetId} returning version`.execute(trx)
  const row = rows[0]
  if (row === undefined) throw new Error(`dataset ${datasetId} does not exist`)
  return row.version
}

/**
 * Adds items as one new version: an item whose id is in the current version replaces it (the old
 * row closed at the new version). Answers the new version and the items as stored.
 */
export async function addDatasetItems(db: Executor, datasetId: string, items: readonly NewDatasetItem[]): Promise<{ version: number; items: DatasetItemDto[] }> {
  return inTransaction(db, async (trx) => {
    const version = await nextVersion(trx, datasetId)
    const ids = items.map((item) => item.id)
    // A replaced item keeps its place; new ones go after the last (the dataset's row is held, so no one else is numbering).
    const replaced = new Map<string, number>()
    for (let start = 0; start < ids.length; start += 1_000) {
      const closed = await trx
        .updateTable('dataset_items')
        .set({ valid_to: version })
        .where('dataset_id', '=', datasetId)
        .where('id', 'in', ids.slice(start, start + 1_000))
        .where('valid_to', 'is', null)
        .returning(['id', 'position'])
        .execute()
      for (const row of closed) replaced.set(row.id, row.position)
    }
    const { last } = await trx.selectFrom('dataset_items').select((eb) => eb.fn.max('position').as('last')).where('dataset_id', '=', datasetId).executeTakeFirstOrThrow()
    let next = (last ?? 0) + 1
    const positions = items.map((item) => replaced.get(item.id) ?? next++)
    const stored: DatasetItemDto[] = []
    // Insert in slices: one statement's parameters stay far below Postgres's 65,535.
    for (let start = 0; start < items.length; start += 1_000) {
      const rows = await trx
        .insertInto('dataset_items')
        .values(
          items.slice(start, start + 1_000).map((item, offset) => ({
            dataset_id: datasetId,
            id: item.id,
            valid_from: version,
            position: positions[start + offset] as number,
            input: JSON.stringify(item.input),
            expected_output: item.expectedOutput === undefined || item.expectedOutput === null ? null : JSON.stringify(item.expectedOutput),
            metadata: item.metadata === null ? null : JSON.stringify(item.metadata),
            source_trace_id: item.sourceTraceId,
            source_span_id: item.sourceSpanId,
          })),
        )
        .returningAll()
        .execute()
      stored.push(...rows.map(toItem))
    }
    return { version, items: stored }
  })
}

/** Deletes an item from the current version (a new version without it); undefined when it is not current. */
export async function deleteDatasetItem(db: Executor, datasetId: string, itemId: string): Promise<number | undefined> {
  return inTransaction(db, async (trx) => {
    const current = await trx.selectFrom('dataset_items').select('id').where('dataset_id', '=', datasetId).where('id', '=', itemId).where('valid_to', 'is', null).executeTakeFirst()
    if (current === undefined) return undefined
    const version = await nextVersion(trx, datasetId)
    await trx.updateTable('dataset_items').set({ valid_to: version }).where('dataset_id', '=', datasetId).where('id', '=', itemId).where('valid_to', 'is', null).execute()
    return version
  })
}

/** Deletes a dataset with its items, experiments and their results (the traces and scores stay); false when there was none. */
export async function deleteDataset(db: Executor, projectId: string, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom('datasets').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return deleted.numDeletedRows > 0n
}
