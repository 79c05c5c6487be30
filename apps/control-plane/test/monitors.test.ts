import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { randomBytes } from 'node:crypto'
import { evaluateDueMonitor, sql, type SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// The monitors' API (docs/api.md#monitors): what is stored, what is refused and why, who may do
// what. Evaluation itself is the evaluator's (apps/evaluator/test/monitors.test.ts).

describe('monitors', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, as: Workspace = ws) =>
    cp.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}project_id=${as.projectId}`, headers: { 'x-api-key': as.teamKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
  const withProjectKey = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': ws.projectKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
  const errors = { name: 'errors', metric: 'error_rate', windowSeconds: 300, operator: '>', threshold: 0.1, channelIds: [] }

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  it('makes a monitor with the defaults, due at once, and reads it back', async () => {
    const created = await call('POST', '/api/monitors', { ...errors, filter: { service: 'api', status: 'error' } })
    assert.equal(created.statusCode, 201)
    const monitor = created.json()
    assert.deepEqual({ ...monitor, id: undefined, nextEvaluationAt: undefined, createdAt: undefined, updatedAt: undefined }, {
      id: undefined, projectId: ws.projectId, name: 'errors', metric: 'error_rate', scoreName: null, filter: { service: 'api', status: 'error' }, window: 'rolling',
      windowSeconds: 300, operator: '>', threshold: 0.1, evaluateEverySeconds: 60, channelIds: [], renotifyAfterSeconds: null, mutedUntil: null,
      budgetPercents: null, state: 'ok', stateValue: null, stateChangedAt: null, lastValue: null, lastEvaluatedAt: null,
      nextEvaluationAt: undefined, createdAt: undefined, updatedAt: undefined,
    })
    assert.ok(Date.parse(monitor.nextEvaluationAt) <= Date.now())
    assert.deepEqual((await call('GET', `/api/monitors/${monitor.id}`)).json(), monitor)
    // A project key reads its own project's monitors.
    assert.deepEqual((await withProjectKey('GET', '/api/monitors')).json(), { monitors: [monitor] })
    assert.deepEqual((await call('GET', '/api/monitors', undefined, other)).json(), { monitors: [] })
    assert.equal((await call('GET', `/api/monitors/${monitor.id}`, undefined, other)).statusCode, 404)
  })

  it('makes a monthly cost budget that notifies at 50, 80 and 100 %', async () => {
    const created = await call('POST', '/api/monitors', { name: 'budget', metric: 'cost', window: 'calendar_month', operator: '>=', threshold: 500, channelIds: [] })
    assert.equal(created.statusCode, 201)
    const { window, windowSeconds, budgetPercents } = created.json()
    assert.deepEqual({ window, windowSeconds, budgetPercents }, { window: 'calendar_month', windowSeconds: null, budgetPercents: [50, 80, 100] })
  })

  it('refuses what cannot be watched, naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...errors, windowSeconds: undefined }, 'body/windowSeconds: give either windowSeconds (a rolling window) or window: "calendar_month" (a monthly budget)'],
      [{ ...errors, window: 'calendar_month' }, 'body/windowSeconds: give either windowSeconds (a rolling window) or window: "calendar_month" (a monthly budget)'],
      [{ ...errors, windowSeconds: undefined, window: 'calendar_month' }, 'body/window: calendar_month sums cost, tokens or traces over the month, not error_rate'],
      [{ ...errors, budgetPercents: [50] }, 'body/budgetPercents: only with window: "calendar_month"'],
      [{ ...errors, metric: 'score_avg' }, 'body/scoreName: score_avg needs the score to average'],
      [{ ...errors, scoreName: 'quality' }, 'body/scoreName: only for metric score_avg'],
      [{ ...errors, evaluateEverySeconds: 5 }, 'body/evaluateEverySeconds: must be >= 10'],
      [{ ...errors, filter: { attr: ['novalue'] } }, 'body/filter/attr/0: expected key=value, got "novalue"'],
      [{ ...errors, mutedUntil: 'tomorrow' }, 'body/mutedUntil: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "tomorrow"'],
      [{ ...errors, metric: 'spans' }, 'body/metric: must be equal to one of the allowed values'],
    ]
    for (const [body, message] of cases) {
      const response = await call('POST', '/api/monitors', body)
      assert.deepEqual([response.statusCode, response.json().message], [400, message], JSON.stringify(body))
    }
  })

  it('checks channels against the project’s notification channels once they exist', async () => {
    const { rows: [table] } = await sql<{ exists: boolean }>`select to_regclass('notification_channels') is not null as exists`.execute(cp.db)
    const response = await call('POST', '/api/monitors', { ...errors, channelIds: ['no-such-channel'] })
    if (table?.exists === true) assert.deepEqual([response.statusCode, response.json().message], [400, 'body/channelIds/0: no notification channel "no-such-channel" in this project'])
    else assert.equal(response.statusCode, 201)
  })

  it('takes a team key or the console to change monitors; a project key only reads', async () => {
    const refused = await withProjectKey('POST', '/api/monitors', errors)
    assert.deepEqual([refused.statusCode, refused.json()], [
      403,
      { message: 'Not allowed: this needs the permission monitors:write (docs/permissions.md)' },
    ])
  })

  it('replaces, mutes and deletes a monitor', async () => {
    const id = (await call('POST', '/api/monitors', errors)).json().id as string
    const muted = '2030-01-01T00:00:00.000Z'
    const replaced = await call('PUT', `/api/monitors/${id}`, { ...errors, name: 'slow', metric: 'latency_p95', threshold: 2000, mutedUntil: muted, renotifyAfterSeconds: 3600 })
    assert.equal(replaced.statusCode, 200)
    const { name, metric, threshold, mutedUntil, renotifyAfterSeconds } = replaced.json()
    assert.deepEqual({ name, metric, threshold, mutedUntil, renotifyAfterSeconds }, { name: 'slow', metric: 'latency_p95', threshold: 2000, mutedUntil: muted, renotifyAfterSeconds: 3600 })
    assert.equal((await call('PUT', `/api/monitors/${id}`, errors, other)).statusCode, 404)
    assert.equal((await withProjectKey('DELETE', `/api/monitors/${id}`)).statusCode, 403)
    assert.equal((await call('DELETE', `/api/monitors/${id}`)).statusCode, 204)
    assert.equal((await call('GET', `/api/monitors/${id}`)).statusCode, 404)
    assert.equal((await call('DELETE', `/api/monitors/${id}`)).statusCode, 404)
  })

  it('lists a monitor’s history, newest first', async () => {
    const monitor = (await call('POST', '/api/monitors', { ...errors, name: 'history' })).json()
    // Every other monitor is evaluated later: only this one is due.
    await sql`update monitors set next_evaluation_at = now() + interval '1 hour' where id <> ${monitor.id}`.execute(cp.db)
    const window = { from: new Date('2026-12-01T00:00:00Z'), to: new Date('2026-12-01T00:05:00Z') }
    const evaluated = await evaluateDueMonitor(cp.db, async () => ({ value: 0.25, state: 'alerting', window, events: [{ kind: 'alerting', value: 0.25, threshold: 0.1, channelIds: [] }] }))
    assert.equal(evaluated, true)
    const history = await call('GET', `/api/monitors/${monitor.id}/history`)
    assert.equal(history.statusCode, 200)
    const [event] = history.json().events
    assert.deepEqual({ ...event, id: undefined, createdAt: undefined }, {
      id: undefined, monitorId: monitor.id, kind: 'alerting', state: 'alerting', value: 0.25, threshold: 0.1,
      window: { from: '2026-12-01T00:00:00.000Z', to: '2026-12-01T00:05:00.000Z' }, channelIds: [], createdAt: undefined,
    })
    const { state, stateValue } = (await call('GET', `/api/monitors/${monitor.id}`)).json()
    assert.deepEqual({ state, stateValue }, { state: 'alerting', stateValue: 0.25 })
    assert.equal((await call('GET', `/api/monitors/${monitor.id}/history`, undefined, other)).statusCode, 404)
  })

  it('previews the metric over the last day against the threshold', async () => {
    // Two traces ten minutes ago, one of them failed ($2.50 spent by the other): that 5-minute bucket is at 0.5.
    const start = BigInt(Date.now() - 600_000) * 1_000_000n
    const span = (failed: boolean): SpanInsert => ({
      projectId: ws.projectId, traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), parentSpanId: null, name: 'answer', kind: 1,
      startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1_000_000n), durationNs: '1000000', traceState: null, statusCode: failed ? 2 : 0,
      statusMessage: null, serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: failed ? null : 'openai',
      llmModel: failed ? null : 'gpt-4o', llmRequestType: failed ? null : 'chat', inputTokens: null, outputTokens: null, totalTokens: null, totalCostUsd: failed ? null : 2.5, sessionId: null, userId: null, attributes: {}, resourceAttributes: {}, events: [], links: [],
    })
    await storeSpans(cp.db, [span(true), span(false)])
    await summariseAll(cp.db)
    const preview = await withProjectKey('POST', '/api/monitors/preview', { metric: 'error_rate', windowSeconds: 300, operator: '>', threshold: 0.1 })
    assert.equal(preview.statusCode, 200)
    const { granularitySeconds, points } = preview.json() as { granularitySeconds: number; points: Array<{ t: string; value: number | null; breaches: boolean | null }> }
    assert.equal(granularitySeconds, 300)
    assert.ok(points.length >= 288 && points.length <= 289, String(points.length))
    assert.deepEqual(points.filter((p) => p.value !== null).map((p) => [p.value, p.breaches]), [[0.5, true]])
    assert.ok(points.filter((p) => p.value === null).every((p) => p.breaches === null))
    const budget = await call('POST', '/api/monitors/preview', { metric: 'cost', window: 'calendar_month', operator: '>=', threshold: 100 })
    assert.equal(budget.json().granularitySeconds, 86_400)
    // The month to date, a point a day, as running totals: $2.50 by today.
    const days = budget.json().points as Array<{ t: string; value: number; breaches: boolean }>
    assert.equal(days.length, new Date().getUTCDate())
    assert.deepEqual(days.at(-1), { t: `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`, value: 2.5, breaches: false })
    const refused = await call('POST', '/api/monitors/preview', { metric: 'score_avg' })
    assert.deepEqual([refused.statusCode, refused.json().message], [400, 'body/scoreName: score_avg needs the score to average'])
  })
})
