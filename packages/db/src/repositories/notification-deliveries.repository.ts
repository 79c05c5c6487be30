import { sql } from 'kysely'
import { inTransaction, type Executor } from './executor.ts'

// Notifications on their way to a channel, and the log of every try (docs/operations.md#notifications).
// The delivery worker claims due deliveries with FOR UPDATE SKIP LOCKED and, in the same statement,
// pushes their next_attempt_at past the send's timeout (a lease): the row lock ends with that
// statement, so nothing is held open while a receiver takes its time, and another replica skips
// the row until the lease runs out, which only happens if this one died mid-send.

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface DeliveryAttemptDto {
  at: string
  ok: boolean
  status: number | null
  error: string | null
  durationMs: number
}

export interface NotificationDeliveryDto {
  id: string
  channelId: string
  kind: 'event' | 'test'
  eventId: string | null
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: string | null
  lastStatus: number | null
  lastError: string | null
  createdAt: string
  deliveredAt: string | null
  log: DeliveryAttemptDto[]
}

/** A delivery as the worker sends it. */
export interface ClaimedDelivery {
  id: string
  channelId: string
  payload: Record<string, unknown>
  /** This try's number, from 1. */
  attempt: number
  createdAt: Date
}

export async function createNotificationDelivery(
  db: Executor,
  delivery: { id?: string; channelId: string; kind: 'event' | 'test'; eventId: string | null; payload: unknown },
): Promise<string> {
  const row = await db
    .insertInto('notification_deliveries')
    .values({ ...(delivery.id === undefined ? {} : { id: delivery.id }), channel_id: delivery.channelId, kind: delivery.kind, event_id: delivery.eventId, payload: JSON.stringify(delivery.payload) })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/** Up to `limit` due pending deliveries, each leased for `leaseMs` and its attempt counted. */
export async function claimDueDeliveries(db: Executor, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const rows = await db
    .updateTable('notification_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: sql<Date>`now() + make_interval(secs => ${leaseMs / 1000})` }))
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('notification_deliveries')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', sql<Date>`now()`)
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', '=', 'pending')
    .returning(['id', 'channel_id', 'payload', 'attempts', 'created_at'])
    .execute()
  return rows.map((row) => ({ id: row.id, channelId: row.channel_id, payload: row.payload, attempt: row.attempts, createdAt: row.created_at }))
}

export interface AttemptRecord {
  ok: boolean
  httpStatus: number | null
  error: string | null
  durationMs: number
  /** pending (with when to try next), delivered or failed (given up). */
  next: { status: 'pending'; at: Date } | { status: 'delivered' | 'failed' }
}

/** Logs one try and moves the delivery on; for a test message, counts its single try too. */
export async function recordDeliveryAttempt(db: Executor, deliveryId: string, attempt: AttemptRecord, countAttempt = false): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx
      .insertInto('notification_attempts')
      .values({ delivery_id: deliveryId, ok: attempt.ok, http_status: attempt.httpStatus, error: attempt.error, duration_ms: attempt.durationMs })
      .execute()
    await trx
      .updateTable('notification_deliveries')
      .set((eb) => ({
        status: attempt.next.status,
        ...(countAttempt ? { attempts: eb('attempts', '+', 1) } : {}),
        ...(attempt.next.status === 'pending' ? { next_attempt_at: attempt.next.at } : {}),
        ...(attempt.next.status === 'delivered' ? { delivered_at: sql<Date>`now()` } : {}),
        last_status: attempt.httpStatus,
        last_error: attempt.error,
      }))
      .where('id', '=', deliveryId)
      .execute()
  })
}

/** A channel's newest deliveries, each with its log of tries (oldest try first). */
export async function listChannelDeliveries(db: Executor, channelId: string, limit: number): Promise<NotificationDeliveryDto[]> {
  const rows = await db
    .selectFrom('notification_deliveries')
    .selectAll()
    .where('channel_id', '=', channelId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
  if (rows.length === 0) return []
  const attempts = await db
    .selectFrom('notification_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('attempted_at')
    .orderBy('id')
    .execute()
  const logs = new Map<string, DeliveryAttemptDto[]>()
  for (const attempt of attempts) {
    const log = logs.get(attempt.delivery_id) ?? []
    log.push({ at: attempt.attempted_at.toISOString(), ok: attempt.ok, status: attempt.http_status, error: attempt.error, durationMs: attempt.duration_ms })
    logs.set(attempt.delivery_id, log)
  }
  return rows.map((row) => ({
    id: row.id,
    channelId: row.channel_id,
    kind: row.kind,
    eventId: row.event_id,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    deliveredAt: row.delivered_at === null ? null : row.delivered_at.toISOString(),
    log: logs.get(row.id) ?? [],
  }))
}
