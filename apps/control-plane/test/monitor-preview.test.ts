import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// POST /api/monitors/preview (docs/api.md#monitors): a monitor's metric over a window before the
// monitor is saved, as the console's monitor form charts it against the threshold.

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z
const minuteMs = 60_000

function trace(projectId: string, startNs: bigint, service: string, failed: boolean): SpanInsert {
  const endNs = startNs + 2_000_000n
  return {
    projectId, traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), parentSpanId: null, name: 'POST /chat', kind: 2,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: failed ? 2 : 0, statusMessage: failed ? 'model unavailable' : null, serviceName: service, serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: { 'service.name': { stringValue: service } }, events: [], links: [], userId: null, sessionId: null, totalCostUsd: null,
  }
}

describe('monitor preview', () => {
  let cp: TestControlPlane
  let ws: Workspace
  const preview = (payload: unknown, key = ws.projectKey) => cp.app.inject({ method: 'POST', url: '/api/monitors/preview', headers: { 'x-api-key': key }, payload: payload as object })
  const from = new Date(Number(t0 / 1_000_000n)).toISOString()
  const to = new Date(Number(t0 / 1_000_000n) + 3 * minuteMs).toISOString()

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    const other = await seedWorkspace(cp.db, 'Other')
    // Minute 0: chat fails 1 of 2; minute 1: chat fails 2 of 2; minute 2: nothing. billing always fails.
    await storeSpans(cp.db, [
      trace(ws.projectId, t0 + 5n * second, 'chat', true),
      trace(ws.projectId, t0 + 10n * second, 'chat', false),
      trace(ws.projectId, t0 + 65n * second, 'chat', true),
      trace(ws.projectId, t0 + 70n * second, 'chat', true),
      trace(ws.projectId, t0 + 75n * second, 'billing', true),
      trace(other.projectId, t0 + 5n * second, 'chat', false),
    ])
    await summariseAll(cp.db)
  })
  after(() => cp.close())

  it("answers the metric's series over the window, with the monitor's filter", async () => {
    const answer = await preview({ metric: 'error_rate', filter: { service: 'chat' }, from, to })
    assert.equal(answer.statusCode, 200)
    const body = answer.json()
    assert.equal(body.id, 'preview')
    assert.equal(body.granularity, 60)
    assert.equal(body.series.length, 1)
    assert.equal(body.series[0].group, null)
    const values = Object.fromEntries(body.series[0].points.map((point: { t: string; value: number | null }) => [point.t, point.value]))
    assert.equal(values[from], 0.5)
    assert.equal(values[new Date(Date.parse(from) + minuteMs).toISOString()], 1)
    // Without a filter, billing's failure counts too (3 of 3 in minute 1).
    const all = (await preview({ metric: 'traces', from, to })).json()
    const counts = all.series[0].points.map((point: { value: number | null }) => point.value ?? 0)
    assert.equal(
      counts.reduce((sum: number, value: number) => sum + value, 0),
      5,
      "every trace of the project, none of another's",
    )
  })

  it('names what is wrong with a query', async () => {
    const cases: Array<[unknown, string]> = [
      [{ metric: 'score_avg', from, to }, 'body/scoreName: score_avg needs the score to average'],
      [{ metric: 'error_rate', from: to, to: from }, 'body/from: must be before to'],
      [{ metric: 'error_rate', from: 'yesterday' }, 'body/from: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "yesterday"'],
      [{ metric: 'error_rate', filter: { attr: ['no-equals'] } }, 'body/filter/attr/0: expected key=value, got "no-equals"'],
    ]
    for (const [payload, message] of cases) {
      const answer = await preview(payload)
      assert.equal(answer.statusCode, 400, JSON.stringify(payload))
      assert.equal(answer.json().message, message)
    }
    const unknownMetric = await preview({ metric: 'spans' })
    assert.equal(unknownMetric.statusCode, 400)
    assert.match(unknownMetric.json().message, /body\/metric/)
    assert.equal((await preview({ metric: 'traces' }, 'tw_proj_wrong')).statusCode, 401)
  })
})
