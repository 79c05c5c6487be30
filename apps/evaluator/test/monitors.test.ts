import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createMonitor, createProject, createTeam, evaluateDueMonitor, sql, type Db, type DueMonitor, type MonitorSettings, type SpanInsert } from '@tracewell/db'
import { createEmbeddedTestDatabase, createTestDatabase } from '@tracewell/db/testing'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { startMonitorLoop, type MonitorLoop } from '../src/monitors/monitor.loop.ts'
import { decideMonitor } from '../src/monitors/monitor-evaluation.ts'

// Monitors evaluated by the worker's loop against the real Postgres: states, events (the outbox),
// renotification, mutes, budgets, and two loops racing for the same due monitors.

const hex = (bytes: number) => randomBytes(bytes).toString('hex')
const quietLogger = { info: () => undefined, warn: () => undefined, error: () => undefined }

/** A one-span trace that started `agoMs` before now. */
function trace(projectId: string, { error, agoMs = 30_000, cost }: { error: boolean; agoMs?: number; cost?: number }): SpanInsert {
  const start = BigInt(Date.now() - agoMs) * 1_000_000n
  return {
    projectId, traceId: hex(16), spanId: hex(8), parentSpanId: null, name: 'answer', kind: 1, startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 5_000_000n), durationNs: '5000000', traceState: null, statusCode: error ? 2 : 0, statusMessage: null,
    serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: cost === undefined ? null : 'openai',
    llmModel: cost === undefined ? null : 'gpt-4o', llmRequestType: cost === undefined ? null : 'chat', inputTokens: null, outputTokens: null,
    totalTokens: null, totalCostUsd: cost ?? null, sessionId: null, userId: null, attributes: {}, resourceAttributes: {}, events: [], links: [],
  }
}

const errorRateMonitor = (overrides: Partial<MonitorSettings> = {}): MonitorSettings => ({
  name: 'failing answers', metric: 'error_rate', scoreName: null, filter: {}, window: 'rolling', windowSeconds: 600, operator: '>', threshold: 0.5,
  evaluateEverySeconds: 60, channelIds: ['channel-1'], renotifyAfterSeconds: null, mutedUntil: null, budgetPercents: null, ...overrides,
})

interface EventRow {
  kind: string
  state: string
  value: number | null
  threshold: number
  channel_ids: string[]
}

describe('monitor evaluation', () => {
  let db: Db
  let drop: () => Promise<void>
  let loop: MonitorLoop
  let teamId: string

  before(async () => {
    ;({ db, drop } = await createTestDatabase())
    teamId = (await createTeam(db, { name: 'monitors' })).id
    // A poll interval no test waits for: each test calls evaluateDue itself.
    loop = startMonitorLoop({ db, pollIntervalMs: 3_600_000, concurrency: 2, logger: quietLogger })
  })
  after(async () => {
    await loop.close()
    await drop()
  })

  const newProject = async () => (await createProject(db, { teamId, name: hex(4) })).id
  const send = async (spans: SpanInsert[]) => {
    await storeSpans(db, spans)
    await summariseAll(db)
  }
  const eventsOf = async (monitorId: string) =>
    (await sql<EventRow>`select kind, state, value, threshold, channel_ids from monitor_events where monitor_id = ${monitorId} order by created_at, id`.execute(db)).rows
  const makeDue = (monitorId: string) => sql`update monitors set next_evaluation_at = now() where id = ${monitorId}`.execute(db)
  const stateOf = async (monitorId: string) =>
    (await sql<{ state: string; state_value: number | null; last_value: number | null }>`select state, state_value, last_value from monitors where id = ${monitorId}`.execute(db)).rows[0]

  it('alerts once, stays quiet while alerting, and resolves', async () => {
    const projectId = await newProject()
    const monitor = await createMonitor(db, projectId, errorRateMonitor())
    await send([trace(projectId, { error: true }), trace(projectId, { error: true }), trace(projectId, { error: false })])
    assert.equal(await loop.evaluateDue(), 1)
    assert.deepEqual(await stateOf(monitor.id), { state: 'alerting', state_value: 2 / 3, last_value: 2 / 3 })
    // Not due again within its interval.
    assert.equal(await loop.evaluateDue(), 0)
    await makeDue(monitor.id)
    await loop.evaluateDue()
    assert.equal((await eventsOf(monitor.id)).length, 1, 'still alerting: no second notification')

    await send([trace(projectId, { error: false }), trace(projectId, { error: false })])
    await makeDue(monitor.id)
    await loop.evaluateDue()
    assert.deepEqual(await eventsOf(monitor.id), [
      { kind: 'alerting', state: 'alerting', value: 2 / 3, threshold: 0.5, channel_ids: ['channel-1'] },
      { kind: 'resolved', state: 'ok', value: 0.4, threshold: 0.5, channel_ids: ['channel-1'] },
    ])
  })

  it('says no data when there is nothing to measure, recorded without a message', async () => {
    const projectId = await newProject()
    const monitor = await createMonitor(db, projectId, errorRateMonitor({ metric: 'latency_p95', threshold: 1000 }))
    await loop.evaluateDue()
    assert.equal((await stateOf(monitor.id))?.state, 'no_data')
    assert.deepEqual(await eventsOf(monitor.id), [{ kind: 'no_data', state: 'no_data', value: null, threshold: 1000, channel_ids: [] }])
  })

  it('notifies again after renotifyAfterSeconds while alerting', async () => {
    const projectId = await newProject()
    const monitor = await createMonitor(db, projectId, errorRateMonitor({ renotifyAfterSeconds: 300 }))
    await send([trace(projectId, { error: true })])
    await loop.evaluateDue()
    await makeDue(monitor.id)
    await loop.evaluateDue()
    assert.deepEqual((await eventsOf(monitor.id)).map((e) => e.kind), ['alerting'])
    await sql`update monitors set last_notified_at = now() - interval '301 seconds', next_evaluation_at = now() where id = ${monitor.id}`.execute(db)
    await loop.evaluateDue()
    await makeDue(monitor.id)
    await loop.evaluateDue()
    assert.deepEqual((await eventsOf(monitor.id)).map((e) => [e.kind, e.channel_ids]), [['alerting', ['channel-1']], ['renotify', ['channel-1']]])
  })

  it('records the changes of a muted monitor without notifying', async () => {
    const projectId = await newProject()
    const monitor = await createMonitor(db, projectId, errorRateMonitor({ mutedUntil: new Date(Date.now() + 3_600_000) }))
    await send([trace(projectId, { error: true })])
    await loop.evaluateDue()
    assert.deepEqual((await eventsOf(monitor.id)).map((e) => [e.kind, e.channel_ids]), [['alerting', []]])
  })

  it('evaluates each due monitor once when two loops race, one event per change', async () => {
    const projectId = await newProject()
    await send([trace(projectId, { error: true })])
    const monitors = await Promise.all(Array.from({ length: 30 }, (_, i) => createMonitor(db, projectId, errorRateMonitor({ name: `m${i}` }))))
    const other = startMonitorLoop({ db, pollIntervalMs: 3_600_000, concurrency: 3, logger: quietLogger })
    try {
      const [a, b] = await Promise.all([loop.evaluateDue(), other.evaluateDue()])
      assert.equal(a + b, 30)
    } finally {
      await other.close()
    }
    const { rows } = await sql<{ monitor_id: string; n: number }>`
      select monitor_id, count(*)::int as n from monitor_events where project_id = ${projectId} group by 1`.execute(db)
    assert.equal(rows.length, 30)
    assert.ok(rows.every((row) => row.n === 1), JSON.stringify(rows))
    assert.deepEqual(new Set(rows.map((row) => row.monitor_id)), new Set(monitors.map((m) => m.id)))
  })

  it('postpones a monitor whose metric fails, its state untouched', async () => {
    const projectId = await newProject()
    const monitor = await createMonitor(db, projectId, errorRateMonitor())
    await sql`update monitors set next_evaluation_at = now() + interval '1 hour' where id <> ${monitor.id}`.execute(db)
    await assert.rejects(
      evaluateDueMonitor(db, async (trx) => {
        await sql`select 1 / 0`.execute(trx)
        throw new Error('not reached')
      }),
      /division by zero/,
    )
    const { rows: [row] } = await sql<{ state: string; in_seconds: number }>`
      select state, extract(epoch from next_evaluation_at - now())::float8 as in_seconds from monitors where id = ${monitor.id}`.execute(db)
    assert.equal(row?.state, 'ok')
    assert.ok(row !== undefined && row.in_seconds > 50 && row.in_seconds <= 60, String(row?.in_seconds))
    assert.deepEqual(await eventsOf(monitor.id), [])
  })

  it('tracks a monthly cost budget: a step once a month, the budget itself as the alert', async () => {
    const projectId = await newProject()
    const monitor = await createMonitor(db, projectId, errorRateMonitor({ metric: 'cost', window: 'calendar_month', windowSeconds: null, operator: '>=', threshold: 10, budgetPercents: [50, 80, 100] }))
    await send([trace(projectId, { error: false, cost: 6, agoMs: 1_000 })])
    await loop.evaluateDue()
    assert.deepEqual(await eventsOf(monitor.id), [{ kind: 'budget', state: 'ok', value: 6, threshold: 5, channel_ids: ['channel-1'] }])
    await makeDue(monitor.id)
    await loop.evaluateDue()
    assert.equal((await eventsOf(monitor.id)).length, 1, 'a step is notified once a month')
    await send([trace(projectId, { error: false, cost: 5, agoMs: 1_000 })])
    await makeDue(monitor.id)
    await loop.evaluateDue()
    assert.deepEqual((await eventsOf(monitor.id)).map((e) => [e.kind, e.value]), [['budget', 6], ['alerting', 11]])
  })
})

describe('monitor evaluation on PGlite (npm start)', () => {
  it('alerts once, its lanes taking turns on the one connection', async () => {
    const { db, drop } = await createEmbeddedTestDatabase()
    const loop = startMonitorLoop({ db, pollIntervalMs: 3_600_000, concurrency: 2, logger: quietLogger })
    try {
      const projectId = (await createProject(db, { teamId: (await createTeam(db, { name: 't' })).id, name: 'p' })).id
      const monitors = await Promise.all([createMonitor(db, projectId, errorRateMonitor()), createMonitor(db, projectId, errorRateMonitor({ name: 'second' }))])
      await storeSpans(db, [trace(projectId, { error: true })])
      await summariseAll(db)
      assert.equal(await loop.evaluateDue(), 2)
      const { rows } = await sql<{ monitor_id: string; kind: string }>`select monitor_id, kind from monitor_events order by monitor_id`.execute(db)
      assert.deepEqual(rows, monitors.map((m) => ({ monitor_id: m.id, kind: 'alerting' })).sort((a, b) => a.monitor_id.localeCompare(b.monitor_id)))
    } finally {
      await loop.close()
      await drop()
    }
  })
})

describe('monitor decisions', () => {
  const base: DueMonitor = {
    id: 'm', projectId: 'p', name: 'budget', metric: 'cost', scoreName: null, filter: {}, window: 'calendar_month', windowSeconds: null, operator: '>=', threshold: 100,
    evaluateEverySeconds: 60, channelIds: ['c'], renotifyAfterSeconds: null, mutedUntil: null, budgetPercents: [50, 80, 100], state: 'ok', stateValue: null,
    stateChangedAt: null, lastValue: null, lastEvaluatedAt: null, nextEvaluationAt: '2026-03-01T00:00:00Z', createdAt: '2026-03-01T00:00:00Z',
    updatedAt: '2026-03-01T00:00:00Z', lastNotifiedAt: null, budgetMonth: null, budgetNotifiedPercent: null,
  }
  const now = new Date('2026-03-15T12:00:00Z')

  it('notifies the highest budget step reached, once a month, the 100 % step as the alert', () => {
    assert.deepEqual(decideMonitor(base, 85, now).events.map((e) => [e.kind, e.threshold]), [['budget', 80]])
    assert.deepEqual(decideMonitor(base, 85, now).budget, { month: '2026-03', percent: 80 })
    assert.deepEqual(decideMonitor({ ...base, budgetMonth: '2026-03', budgetNotifiedPercent: 80 }, 90, now).events, [])
    // Last month's steps do not count in this one.
    assert.deepEqual(decideMonitor({ ...base, budgetMonth: '2026-02', budgetNotifiedPercent: 80 }, 55, now).events.map((e) => e.kind), ['budget'])
    assert.deepEqual(decideMonitor({ ...base, budgetMonth: '2026-03', budgetNotifiedPercent: 80 }, 120, now).events.map((e) => e.kind), ['alerting'])
  })

  it('notifies the end of an alert for lack of data, but not data going quiet while ok', () => {
    assert.deepEqual(decideMonitor({ ...base, budgetPercents: null, state: 'alerting' }, null, now).events, [{ kind: 'no_data', value: null, threshold: 100, channelIds: ['c'] }])
    assert.deepEqual(decideMonitor({ ...base, budgetPercents: null }, null, now).events, [{ kind: 'no_data', value: null, threshold: 100, channelIds: [] }])
  })
})
