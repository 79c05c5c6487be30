import { sql, type Selectable } from 'kysely'
import type { MonitorEventKind, MonitorEventsTable, MonitorState, MonitorsTable } from '../database.ts'
import type { Executor } from './executor.ts'
import type { MonitorMetric } from './metric-series.repository.ts'
import type { TraceFilterParams } from './trace-filter-params.ts'

// Monitors (issue 45 §1) and their events: the history of each state change and the outbox the
// delivery worker reads (migration 2026-12-06T0210). A state and its event are written in one
// transaction, on the row the evaluator holds locked (evaluateDueMonitor), so one change makes
// one event however many evaluators run.

export type MonitorOperator = '>' | '>=' | '<' | '<='
export type MonitorWindow = 'rolling' | 'calendar_month'

/** Whether a value is past a monitor's threshold: what alerting means (the evaluator's decision and the console's preview). */
export function breachesThreshold(value: number, operator: MonitorOperator, threshold: number): boolean {
  switch (operator) {
    case '>':
      return value > threshold
    case '>=':
      return value >= threshold
    case '<':
      return value < threshold
    case '<=':
      return value <= threshold
  }
}

export interface MonitorSettings {
  name: string
  metric: MonitorMetric
  scoreName: string | null
  filter: TraceFilterParams
  window: MonitorWindow
  /** The rolling window; null for a calendar month. */
  windowSeconds: number | null
  operator: MonitorOperator
  threshold: number
  evaluateEverySeconds: number
  channelIds: string[]
  renotifyAfterSeconds: number | null
  mutedUntil: Date | null
  /** A budget's steps, in % of the threshold (calendar month only); null: none. */
  budgetPercents: number[] | null
}

export interface MonitorDto extends Omit<MonitorSettings, 'mutedUntil'> {
  id: string
  projectId: string
  mutedUntil: string | null
  state: MonitorState
  /** The value that made the last state change (null: no data, or never changed). */
  stateValue: number | null
  stateChangedAt: string | null
  lastValue: number | null
  lastEvaluatedAt: string | null
  nextEvaluationAt: string
  createdAt: string
  updatedAt: string
}

export interface MonitorEventDto {
  id: string
  monitorId: string
  kind: MonitorEventKind
  state: MonitorState
  value: number | null
  threshold: number
  window: { from: string; to: string }
  /** The channels notified; empty when the change was only recorded (muted, or not worth a message). */
  channelIds: string[]
  createdAt: string
}

type MonitorRow = Selectable<MonitorsTable>

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString())

function toMonitor(row: MonitorRow): MonitorDto {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    metric: row.metric as MonitorMetric,
    scoreName: row.score_name,
    filter: row.filter as TraceFilterParams,
    window: row.window_kind,
    windowSeconds: row.window_seconds,
    operator: row.operator,
    threshold: row.threshold,
    evaluateEverySeconds: row.evaluate_every_seconds,
    channelIds: row.channel_ids,
    renotifyAfterSeconds: row.renotify_after_seconds,
    mutedUntil: iso(row.muted_until),
    budgetPercents: row.budget_percents,
    state: row.state,
    stateValue: row.state_value,
    stateChangedAt: iso(row.state_changed_at),
    lastValue: row.last_value,
    lastEvaluatedAt: iso(row.last_evaluated_at),
    nextEvaluationAt: row.next_evaluation_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

function toEvent(row: Selectable<MonitorEventsTable>): MonitorEventDto {
  return {
    id: row.id,
    monitorId: row.monitor_id,
    kind: row.kind,
    state: row.state,
    value: row.value,
    threshold: row.threshold,
    window: { from: row.window_from.toISOString(), to: row.window_to.toISOString() },
    channelIds: row.channel_ids,
    createdAt: row.created_at.toISOString(),
  }
}

const columnsOf = (settings: MonitorSettings) => ({
  name: settings.name,
  metric: settings.metric,
  score_name: settings.scoreName,
  filter: JSON.stringify(settings.filter),
  window_kind: settings.window,
  window_seconds: settings.windowSeconds,
  operator: settings.operator,
  threshold: settings.threshold,
  evaluate_every_seconds: settings.evaluateEverySeconds,
  channel_ids: settings.channelIds,
  renotify_after_seconds: settings.renotifyAfterSeconds,
  muted_until: settings.mutedUntil,
  budget_percents: settings.budgetPercents,
})

export async function createMonitor(db: Executor, projectId: string, settings: MonitorSettings): Promise<MonitorDto> {
  const row = await db.insertInto('monitors').values({ project_id: projectId, ...columnsOf(settings) }).returningAll().executeTakeFirstOrThrow()
  return toMonitor(row)
}

export async function findMonitor(db: Executor, projectId: string, monitorId: string): Promise<MonitorDto | undefined> {
  const row = await db.selectFrom('monitors').selectAll().where('project_id', '=', projectId).where('id', '=', monitorId).executeTakeFirst()
  return row === undefined ? undefined : toMonitor(row)
}

/** The project's monitors, oldest first. */
export async function listMonitors(db: Executor, projectId: string): Promise<MonitorDto[]> {
  const rows = await db.selectFrom('monitors').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute()
  return rows.map(toMonitor)
}

/**
 * Replaces a monitor's settings; its state stays until the next evaluation, which is due at once
 * (a new threshold or window is judged now, not an interval later).
 */
export async function replaceMonitor(db: Executor, projectId: string, monitorId: string, settings: MonitorSettings): Promise<MonitorDto | undefined> {
  const row = await db
    .updateTable('monitors')
    .set({ ...columnsOf(settings), next_evaluation_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('project_id', '=', projectId)
    .where('id', '=', monitorId)
    .returningAll()
    .executeTakeFirst()
  return row === undefined ? undefined : toMonitor(row)
}

export async function deleteMonitor(db: Executor, projectId: string, monitorId: string): Promise<boolean> {
  const result = await db.deleteFrom('monitors').where('project_id', '=', projectId).where('id', '=', monitorId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** A monitor's events, newest first. */
export async function listMonitorEvents(db: Executor, projectId: string, monitorId: string, limit: number): Promise<MonitorEventDto[]> {
  const rows = await db
    .selectFrom('monitor_events')
    .selectAll()
    .where('monitor_id', '=', monitorId)
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
  return rows.map(toEvent)
}

/**
 * Which of these ids are not notification channels of the project; null when this database has
 * no channels table yet (the notification channels' migration comes with their own change).
 */
export async function missingChannelIds(db: Executor, projectId: string, channelIds: readonly string[]): Promise<string[] | null> {
  const { rows: [table] } = await sql<{ exists: boolean }>`select to_regclass('notification_channels') is not null as exists`.execute(db)
  if (table?.exists !== true) return null
  if (channelIds.length === 0) return []
  const { rows } = await sql<{ id: string }>`select id from notification_channels where project_id = ${projectId} and id = any(${[...channelIds]}::text[])`.execute(db)
  const found = new Set(rows.map((row) => row.id))
  return channelIds.filter((id) => !found.has(id))
}

/** The longest a monitor's metric may take to read, whatever its interval. */
const MAX_READ_SECONDS = 30

/** What the evaluator holds of a due monitor: its settings and the state it is in. */
export interface DueMonitor extends MonitorDto {
  lastNotifiedAt: Date | null
  /** The UTC month (YYYY-MM) of budgetNotifiedPercent. */
  budgetMonth: string | null
  budgetNotifiedPercent: number | null
}

export interface MonitorEventDraft {
  kind: MonitorEventKind
  value: number | null
  threshold: number
  channelIds: string[]
}

/** The outcome of one evaluation, written with the monitor's row. */
export interface MonitorEvaluation {
  value: number | null
  state: MonitorState
  window: { from: Date; to: Date }
  events: MonitorEventDraft[]
  /** The budget step notified this month, when it moved. */
  budget?: { month: string; percent: number } | undefined
}

/**
 * Claims the monitor due the longest (FOR UPDATE SKIP LOCKED: another evaluator takes the next
 * one), evaluates it with `evaluate` (in the transaction) at the database's clock, and writes its state, its next
 * evaluation and its events in the same transaction. False when none is due.
 */
export async function evaluateDueMonitor(db: Executor, evaluate: (trx: Executor, monitor: DueMonitor, now: Date) => Promise<MonitorEvaluation>): Promise<boolean> {
  let failure: { error: unknown } | undefined
  const run = async (trx: Executor): Promise<boolean> => {
    const { rows: [claimed] } = await sql<MonitorRow & { now: Date }>`
      select *, now() as now from monitors where next_evaluation_at <= now()
      order by next_evaluation_at for update skip locked limit 1`.execute(trx)
    if (claimed === undefined) return false
    const monitor: DueMonitor = {
      ...toMonitor(claimed),
      lastNotifiedAt: claimed.last_notified_at,
      budgetMonth: claimed.budget_month,
      budgetNotifiedPercent: claimed.budget_notified_percent,
    }
    // A read may take its interval at most (30 s at most): one that takes longer is cancelled, not
    // left to hold a lane. Without JIT: these reads answer from index ranges in milliseconds.
    const timeoutMs = Math.min(claimed.evaluate_every_seconds, MAX_READ_SECONDS) * 1000
    await sql`select set_config('statement_timeout', ${String(timeoutMs)}, true), set_config('jit', 'off', true)`.execute(trx)
    // A metric that fails (a statement timeout) postpones this monitor by an interval instead of
    // holding the front of the queue; the error goes to the caller once that is written.
    await sql`savepoint monitor_evaluation`.execute(trx)
    let outcome: MonitorEvaluation
    try {
      outcome = await evaluate(trx, monitor, claimed.now)
    } catch (error) {
      await sql`rollback to savepoint monitor_evaluation`.execute(trx)
      await sql`update monitors set next_evaluation_at = now() + make_interval(secs => ${claimed.evaluate_every_seconds}) where id = ${claimed.id}`.execute(trx)
      failure = { error }
      return true
    }
    const changed = outcome.state !== claimed.state
    const notified = outcome.events.some((event) => event.channelIds.length > 0)
    await trx
      .updateTable('monitors')
      .set({
        state: outcome.state,
        last_value: outcome.value,
        last_evaluated_at: claimed.now,
        next_evaluation_at: sql<Date>`now() + make_interval(secs => ${claimed.evaluate_every_seconds})`,
        ...(changed ? { state_value: outcome.value, state_changed_at: claimed.now } : {}),
        ...(notified ? { last_notified_at: claimed.now } : {}),
        ...(outcome.budget === undefined ? {} : { budget_month: outcome.budget.month, budget_notified_percent: outcome.budget.percent }),
      })
      .where('id', '=', claimed.id)
      .execute()
    if (outcome.events.length > 0) {
      await trx
        .insertInto('monitor_events')
        .values(
          outcome.events.map((event) => ({
            monitor_id: claimed.id,
            project_id: claimed.project_id,
            kind: event.kind,
            state: outcome.state,
            value: event.value,
            threshold: event.threshold,
            window_from: outcome.window.from,
            window_to: outcome.window.to,
            channel_ids: event.channelIds,
          })),
        )
        .execute()
    }
    return true
  }
  const claimed = await (db.isTransaction ? run(db) : db.transaction().execute(run))
  if (failure !== undefined) throw failure.error
  return claimed
}
