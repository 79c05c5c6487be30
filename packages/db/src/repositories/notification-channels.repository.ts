import type { Executor } from './executor.ts'

// A project's notification channels: where its monitors' notifications go (docs/api.md#notification-channels).
// A webhook's signing secret is stored only sealed (the caller seals it, @tracewell/auth's
// sealSecret) and never returned after its creation, only its last four characters.

export type NotificationChannelType = 'webhook' | 'slack' | 'email'

export interface NotificationChannelDto {
  id: string
  projectId: string
  name: string
  type: NotificationChannelType
  url: string | null
  address: string | null
  secretHint: string | null
  createdAt: string
  updatedAt: string
}

/** A channel with its sealed secret: what a sender opens. */
export interface SealedNotificationChannel extends NotificationChannelDto {
  secretSealed: string | null
}

/** What a webhook's sealed secret is bound to (sealSecret's context): it opens for its own project only. */
export const notificationChannelSecretContext = (projectId: string) => `notification-channel:${projectId}`

/** Postgres's unique_violation for a second channel of one name in a project. */
export const NOTIFICATION_CHANNEL_EXISTS = 'notification_channels_name_unique'

interface Row {
  id: string
  project_id: string
  name: string
  type: NotificationChannelType
  url: string | null
  address: string | null
  secret_sealed: string | null
  secret_hint: string | null
  created_at: Date
  updated_at: Date
}

const toDto = (row: Row): NotificationChannelDto => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  type: row.type,
  url: row.url,
  address: row.address,
  secretHint: row.secret_hint,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
})

const toSealed = (row: Row): SealedNotificationChannel => ({ ...toDto(row), secretSealed: row.secret_sealed })

export interface NotificationChannelFields {
  name: string
  type: NotificationChannelType
  url: string | null
  address: string | null
  secretSealed: string | null
  secretHint: string | null
}

export async function createNotificationChannel(db: Executor, projectId: string, fields: NotificationChannelFields): Promise<NotificationChannelDto> {
  const row = await db
    .insertInto('notification_channels')
    .values({
      project_id: projectId,
      name: fields.name,
      type: fields.type,
      url: fields.url,
      address: fields.address,
      secret_sealed: fields.secretSealed,
      secret_hint: fields.secretHint,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toDto(row)
}

/** Replaces a channel's fields; undefined when the project has no such channel. */
export async function updateNotificationChannel(db: Executor, projectId: string, id: string, fields: NotificationChannelFields): Promise<NotificationChannelDto | undefined> {
  const row = await db
    .updateTable('notification_channels')
    .set({
      name: fields.name,
      type: fields.type,
      url: fields.url,
      address: fields.address,
      secret_sealed: fields.secretSealed,
      secret_hint: fields.secretHint,
      updated_at: new Date(),
    })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row === undefined ? undefined : toDto(row)
}

export async function listNotificationChannels(db: Executor, projectId: string): Promise<NotificationChannelDto[]> {
  const rows = await db.selectFrom('notification_channels').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
  return rows.map(toDto)
}

/** The channel with its sealed secret, when the project has it. */
export async function findNotificationChannel(db: Executor, projectId: string, id: string): Promise<SealedNotificationChannel | undefined> {
  const row = await db.selectFrom('notification_channels').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toSealed(row)
}

/** Channels by id, with their sealed secrets: what the delivery worker sends through. */
export async function findNotificationChannelsByIds(db: Executor, ids: readonly string[]): Promise<Map<string, SealedNotificationChannel>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('notification_channels').selectAll().where('id', 'in', [...new Set(ids)]).execute()
  return new Map(rows.map((row) => [row.id, toSealed(row)]))
}

/** Whether it was deleted (its deliveries and their log go with it). */
export async function deleteNotificationChannel(db: Executor, projectId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('notification_channels').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}
