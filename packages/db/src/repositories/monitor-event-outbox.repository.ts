import { sql } from 'kysely'
import type { MonitorEventKind, MonitorState } from '../database.ts'
import { inTransaction, type Executor } from './executor.ts'
import type { TraceFilterParams } from './trace-filter-params.ts'

// monitor_events is the notification outbox (migration 2026-12-06T0210): the delivery worker takes
// the events not yet dispatched, makes one delivery per channel of each, and marks them
// dispatched, all in one transaction. Replicas skip each other's locked events, and the unique
// (event_id, channel_id) refuses a second delivery should an event be taken twice anyway.

export interface OutboxEvent {
  id: string
  projectId: string
  monitorId: string
  monitorName: string
  metric: string
  filter: TraceFilterParams
  kind: MonitorEventKind
  state: MonitorState
  value: number | null
  threshold: number
  windowFrom: Date
  windowTo: Date
}

/** Up to `limit` undispatched events, turned into deliveries to the channels of their project that still exist; how many deliveries were made. */
export async function dispatchMonitorEvents(db: Executor, limit: number, payloadOf: (event: OutboxEvent) => Record<string, unknown>): Promise<number> {
  return inTransaction(db, async (trx) => {
    const events = await trx
      .selectFrom('monitor_events as e')
      .innerJoin('monitors as m', 'm.id', 'e.monitor_id')
      .select([
        'e.id',
        'e.project_id',
        'e.monitor_id',
        'm.name as monitor_name',
        'm.metric',
        'm.filter',
        'e.kind',
        'e.state',
        'e.value',
        'e.threshold',
        'e.window_from',
        'e.window_to',
        'e.channel_ids',
      ])
      .where('e.dispatched_at', 'is', null)
      .where(sql<boolean>`e.channel_ids <> '{}'`)
      .orderBy('e.created_at')
      .limit(limit)
      .forUpdate('e')
      .skipLocked()
      .execute()
    if (events.length === 0) return 0
    const channelIds = [...new Set(events.flatMap((event) => event.channel_ids))]
    const channels = await trx.selectFrom('notification_channels').select(['id', 'project_id']).where('id', 'in', channelIds).execute()
    const projectOf = new Map(channels.map((channel) => [channel.id, channel.project_id]))
    const deliveries = events.flatMap((event) => {
      const payload = JSON.stringify(
        payloadOf({
          id: event.id,
          projectId: event.project_id,
          monitorId: event.monitor_id,
          monitorName: event.monitor_name,
          metric: event.metric,
          filter: event.filter as TraceFilterParams,
          kind: event.kind,
          state: event.state,
          value: event.value,
          threshold: event.threshold,
          windowFrom: event.window_from,
          windowTo: event.window_to,
        }),
      )
      // A channel deleted since, or of another project, is left out.
      return event.channel_ids
        .filter((channelId) => projectOf.get(channelId) === event.project_id)
        .map((channelId) => ({ channel_id: channelId, event_id: event.id, kind: 'event' as const, payload }))
    })
    let made = 0
    if (deliveries.length > 0) {
      const inserted = await trx
        .insertInto('notification_deliveries')
        .values(deliveries)
        .onConflict((conflict) => conflict.columns(['event_id', 'channel_id']).doNothing())
        .returning('id')
        .execute()
      made = inserted.length
    }
    await trx
      .updateTable('monitor_events')
      .set({ dispatched_at: sql<Date>`now()` })
      .where(
        'id',
        'in',
        events.map((event) => event.id),
      )
      .execute()
    return made
  })
}
