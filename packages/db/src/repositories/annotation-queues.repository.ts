import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Annotation queues (docs/collaboration.md#annotation-queues): items wait in `position` order;
// `next` holds the first free one for its taker, so two people never get the same item.

export type QueueObjectType = 'trace' | 'span' | 'session'

export interface AnnotationQueueDto {
  id: string
  name: string
  description: string
  scoreConfigIds: string[]
  assigneeIds: string[]
  progress: { total: number; completed: number; pending: number }
  createdAt: string
  updatedAt: string
}

export interface QueueItemDto {
  id: string
  queueId: string
  objectType: QueueObjectType
  objectId: string
  status: 'pending' | 'completed'
  heldBy: string | null
  heldUntil: string | null
  completedBy: string | null
  completedAt: string | null
}

interface QueueItemRow {
  id: string
  queue_id: string
  object_type: QueueObjectType
  object_id: string
  status: 'pending' | 'completed'
  held_by_user_id: string | null
  held_until: Date | null
  completed_by_user_id: string | null
  completed_at: Date | null
}

function toQueueItemDto(row: QueueItemRow): QueueItemDto {
  return {
    id: row.id,
    queueId: row.queue_id,
    objectType: row.object_type,
    objectId: row.object_id,
    status: row.status,
    heldBy: row.held_by_user_id,
    heldUntil: row.held_until?.toISOString() ?? null,
    completedBy: row.completed_by_user_id,
    completedAt: row.completed_at?.toISOString() ?? null,
  }
}

function selectQueues(db: Executor) {
  return db
    .selectFrom('annotation_queues as q')
    .selectAll('q')
    .select((eb) => [
      eb.selectFrom('annotation_queue_items').select((inner) => inner.fn.countAll<string>().as('n')).whereRef('queue_id', '=', 'q.id').as('total'),
      eb.selectFrom('annotation_queue_items').select((inner) => inner.fn.countAll<string>().as('n')).whereRef('queue_id', '=', 'q.id').where('status', '=', 'completed').as('completed'),
    ])
}

type QueueRow = Awaited<ReturnType<ReturnType<typeof selectQueues>['executeTakeFirstOrThrow']>>

function toQueueDto(row: QueueRow): AnnotationQueueDto {
  const total = Number(row.total ?? 0)
  const completed = Number(row.completed ?? 0)
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    scoreConfigIds: row.score_config_ids,
    assigneeIds: row.assignee_ids,
    progress: { total, completed, pending: total - completed },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export interface QueueSettings {
  name: string
  description: string
  scoreConfigIds: string[]
  assigneeIds: string[]
}

export async function createAnnotationQueue(db: Executor, projectId: string, settings: QueueSettings, createdByUserId: string | null): Promise<AnnotationQueueDto> {
  const { id } = await db
    .insertInto('annotation_queues')
    .values({
      project_id: projectId,
      name: settings.name,
      description: settings.description,
      score_config_ids: settings.scoreConfigIds,
      assignee_ids: settings.assigneeIds,
      created_by_user_id: createdByUserId,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return (await findAnnotationQueue(db, projectId, id)) as AnnotationQueueDto
}

export async function updateAnnotationQueue(db: Executor, projectId: string, queueId: string, settings: QueueSettings): Promise<AnnotationQueueDto | undefined> {
  await db
    .updateTable('annotation_queues')
    .set({ name: settings.name, description: settings.description, score_config_ids: settings.scoreConfigIds, assignee_ids: settings.assigneeIds, updated_at: sql`now()` })
    .where('project_id', '=', projectId)
    .where('id', '=', queueId)
    .execute()
  return findAnnotationQueue(db, projectId, queueId)
}

export async function listAnnotationQueues(db: Executor, projectId: string): Promise<AnnotationQueueDto[]> {
  const rows = await selectQueues(db).where('q.project_id', '=', projectId).orderBy('q.created_at').orderBy('q.id').execute()
  return rows.map(toQueueDto)
}

export async function findAnnotationQueue(db: Executor, projectId: string, queueId: string): Promise<AnnotationQueueDto | undefined> {
  const row = await selectQueues(db).where('q.project_id', '=', projectId).where('q.id', '=', queueId).executeTakeFirst()
  return row && toQueueDto(row)
}

export async function deleteAnnotationQueue(db: Executor, projectId: string, queueId: string): Promise<boolean> {
  const result = await db.deleteFrom('annotation_queues').where('project_id', '=', projectId).where('id', '=', queueId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Adds items at the back of the queue; items already in it stay where they are. The number added. */
export async function addAnnotationQueueItems(db: Executor, queueId: string, objectType: QueueObjectType, objectIds: readonly string[]): Promise<number> {
  if (objectIds.length === 0) return 0
  const added = await db
    .insertInto('annotation_queue_items')
    .values(objectIds.map((objectId) => ({ queue_id: queueId, object_type: objectType, object_id: objectId })))
    .onConflict((oc) => oc.columns(['queue_id', 'object_type', 'object_id']).doNothing())
    .returning('id')
    .execute()
  return added.length
}

/**
 * The item `userId` works on next: the one they hold already, else the first pending item nobody
 * holds (or whose hold ran out), now held by them for `holdMs`. SKIP LOCKED lets concurrent takers
 * pass each other's candidate rows instead of waiting on them and then taking the same one.
 */
export async function takeNextQueueItem(db: Executor, queueId: string, userId: string, holdMs: number): Promise<QueueItemDto | undefined> {
  const holdUntil = sql<Date>`now() + make_interval(secs => ${holdMs / 1000})`
  const held = await db
    .updateTable('annotation_queue_items')
    .set({ held_until: holdUntil })
    .where('queue_id', '=', queueId)
    .where('status', '=', 'pending')
    .where('held_by_user_id', '=', userId)
    .where('held_until', '>', sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst()
  if (held !== undefined) return toQueueItemDto(held)
  const taken = await db
    .updateTable('annotation_queue_items')
    .set({ held_by_user_id: userId, held_until: holdUntil })
    .where(
      'id',
      '=',
      (eb) =>
        eb
          .selectFrom('annotation_queue_items')
          .select('id')
          .where('queue_id', '=', queueId)
          .where('status', '=', 'pending')
          .where((free) => free.or([free('held_until', 'is', null), free('held_until', '<=', sql<Date>`now()`)]))
          .orderBy('position')
          .limit(1)
          .forUpdate()
          .skipLocked(),
    )
    .returningAll()
    .executeTakeFirst()
  return taken && toQueueItemDto(taken)
}

/** Gives an item back (skip): it goes to the back of the queue. Whether the caller held it. */
export async function skipQueueItem(db: Executor, queueId: string, itemId: string, userId: string): Promise<boolean> {
  const result = await db
    .updateTable('annotation_queue_items')
    .set({ held_by_user_id: null, held_until: null, position: sql`nextval('annotation_queue_item_position')` })
    .where('queue_id', '=', queueId)
    .where('id', '=', itemId)
    .where('status', '=', 'pending')
    .where('held_by_user_id', '=', userId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Marks a pending item done by `userId`, if they hold it or nobody does; undefined otherwise (not
 * in the queue, done already, or held by someone else: the caller tells which).
 */
export async function completeQueueItem(db: Executor, queueId: string, itemId: string, userId: string): Promise<QueueItemDto | undefined> {
  const row = await db
    .updateTable('annotation_queue_items')
    .set({ status: 'completed', completed_by_user_id: userId, completed_at: sql`now()`, held_by_user_id: null, held_until: null })
    .where('queue_id', '=', queueId)
    .where('id', '=', itemId)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('held_by_user_id', '=', userId), eb('held_until', 'is', null), eb('held_until', '<=', sql<Date>`now()`)]))
    .returningAll()
    .executeTakeFirst()
  return row && toQueueItemDto(row)
}

export async function findQueueItem(db: Executor, queueId: string, itemId: string): Promise<QueueItemDto | undefined> {
  const row = await db.selectFrom('annotation_queue_items').selectAll().where('queue_id', '=', queueId).where('id', '=', itemId).executeTakeFirst()
  return row && toQueueItemDto(row)
}

/** Items completed per person in a queue, most first. */
export async function queueProgressByPerson(db: Executor, queueId: string): Promise<{ userId: string; name: string; completed: number }[]> {
  const rows = await db
    .selectFrom('annotation_queue_items')
    .innerJoin('users', 'users.id', 'annotation_queue_items.completed_by_user_id')
    .select(['users.id as userId', 'users.name as name', (eb) => eb.fn.countAll<string>().as('completed')])
    .where('queue_id', '=', queueId)
    .where('status', '=', 'completed')
    .groupBy(['users.id', 'users.name'])
    .orderBy('completed', 'desc')
    .execute()
  return rows.map((row) => ({ userId: row.userId, name: row.name, completed: Number(row.completed) }))
}
