import { sql } from 'kysely'
import type { CommentObjectType } from '../database.ts'
import type { Executor } from './executor.ts'

// Comments on what a project holds (docs/collaboration.md#comments). A thread is a first comment
// and its replies; only a first comment is resolved.

export interface CommentDto {
  id: string
  objectType: CommentObjectType
  objectId: string
  threadId: string | null
  author: { id: string; name: string } | null
  body: string
  mentions: string[]
  resolvedAt: string | null
  resolvedBy: { id: string; name: string } | null
  createdAt: string
  updatedAt: string
}

function selectComments(db: Executor) {
  return db
    .selectFrom('comments')
    .leftJoin('users as author', 'author.id', 'comments.author_user_id')
    .leftJoin('users as resolver', 'resolver.id', 'comments.resolved_by_user_id')
    .select([
      'comments.id',
      'comments.object_type',
      'comments.object_id',
      'comments.thread_id',
      'comments.author_user_id',
      'author.name as author_name',
      'comments.body',
      'comments.mentions',
      'comments.resolved_at',
      'comments.resolved_by_user_id',
      'resolver.name as resolver_name',
      'comments.created_at',
      'comments.updated_at',
    ])
}

type CommentRow = Awaited<ReturnType<ReturnType<typeof selectComments>['executeTakeFirstOrThrow']>>

function toCommentDto(row: CommentRow): CommentDto {
  return {
    id: row.id,
    objectType: row.object_type,
    objectId: row.object_id,
    threadId: row.thread_id,
    author: row.author_user_id === null ? null : { id: row.author_user_id, name: row.author_name ?? '' },
    body: row.body,
    mentions: row.mentions,
    resolvedAt: row.resolved_at?.toISOString() ?? null,
    resolvedBy: row.resolved_by_user_id === null ? null : { id: row.resolved_by_user_id, name: row.resolver_name ?? '' },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export interface NewComment {
  projectId: string
  objectType: CommentObjectType
  objectId: string
  threadId: string | null
  authorUserId: string
  body: string
  mentions: string[]
}

export async function createComment(db: Executor, comment: NewComment): Promise<CommentDto> {
  const { id } = await db
    .insertInto('comments')
    .values({
      project_id: comment.projectId,
      object_type: comment.objectType,
      object_id: comment.objectId,
      thread_id: comment.threadId,
      author_user_id: comment.authorUserId,
      body: comment.body,
      mentions: comment.mentions,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return (await findComment(db, comment.projectId, id)) as CommentDto
}

/** The comments on one object, oldest first (threads read top to bottom). */
export async function listComments(db: Executor, projectId: string, objectType: CommentObjectType, objectId: string): Promise<CommentDto[]> {
  const rows = await selectComments(db)
    .where('comments.project_id', '=', projectId)
    .where('comments.object_type', '=', objectType)
    .where('comments.object_id', '=', objectId)
    .orderBy('comments.created_at')
    .orderBy('comments.id')
    .limit(1_000)
    .execute()
  return rows.map(toCommentDto)
}

export async function findComment(db: Executor, projectId: string, commentId: string): Promise<CommentDto | undefined> {
  const row = await selectComments(db).where('comments.project_id', '=', projectId).where('comments.id', '=', commentId).executeTakeFirst()
  return row && toCommentDto(row)
}

export async function editComment(db: Executor, projectId: string, commentId: string, change: { body: string; mentions: string[] }): Promise<void> {
  await db.updateTable('comments').set({ body: change.body, mentions: change.mentions, updated_at: sql`now()` }).where('project_id', '=', projectId).where('id', '=', commentId).execute()
}

/** Deletes a comment (a first comment with its replies); whether it was there. */
export async function deleteComment(db: Executor, projectId: string, commentId: string): Promise<boolean> {
  const result = await db.deleteFrom('comments').where('project_id', '=', projectId).where('id', '=', commentId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Resolves (or with null, reopens) the thread a first comment starts. */
export async function resolveThread(db: Executor, projectId: string, commentId: string, byUserId: string | null): Promise<void> {
  await db
    .updateTable('comments')
    .set({ resolved_at: byUserId === null ? null : sql<Date>`now()`, resolved_by_user_id: byUserId })
    .where('project_id', '=', projectId)
    .where('id', '=', commentId)
    .where('thread_id', 'is', null)
    .execute()
}

/** How many comments each of these traces has (the trace list's count). */
export async function countTraceComments(db: Executor, projectId: string, traceIds: readonly string[]): Promise<Map<string, number>> {
  if (traceIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('comments')
    .select(['object_id', (eb) => eb.fn.countAll<string>().as('count')])
    .where('project_id', '=', projectId)
    .where('object_type', '=', 'trace')
    .where('object_id', 'in', traceIds)
    .groupBy('object_id')
    .execute()
  return new Map(rows.map((row) => [row.object_id, Number(row.count)]))
}

/** Tells each mentioned person once, in the console's notification list. */
export async function notifyMentions(db: Executor, projectId: string, commentId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return
  await db
    .insertInto('user_notifications')
    .values(userIds.map((userId) => ({ user_id: userId, project_id: projectId, kind: 'mention' as const, comment_id: commentId })))
    .execute()
}

export interface UserNotificationDto {
  id: string
  kind: 'mention'
  projectId: string
  comment: CommentDto | null
  createdAt: string
  readAt: string | null
}

/** A person's newest notifications (the last 100). */
export async function listUserNotifications(db: Executor, userId: string): Promise<UserNotificationDto[]> {
  const rows = await db
    .selectFrom('user_notifications')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(100)
    .execute()
  const commentIds = rows.flatMap((row) => (row.comment_id === null ? [] : [row.comment_id]))
  const comments = commentIds.length === 0 ? [] : await selectComments(db).where('comments.id', 'in', commentIds).execute()
  const byId = new Map(comments.map((row) => [row.id, toCommentDto(row)]))
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    projectId: row.project_id,
    comment: row.comment_id === null ? null : (byId.get(row.comment_id) ?? null),
    createdAt: row.created_at.toISOString(),
    readAt: row.read_at?.toISOString() ?? null,
  }))
}

export async function markUserNotificationsRead(db: Executor, userId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await db.updateTable('user_notifications').set({ read_at: sql`now()` }).where('user_id', '=', userId).where('id', 'in', ids).where('read_at', 'is', null).execute()
}
