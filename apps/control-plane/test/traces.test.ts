import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { insertSpans, type SpanInsert } from '@tracewell/db'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

const traceA = 'a'.repeat(32)
const traceB = 'b'.repeat(32)
const traceC = 'c'.repeat(32)
const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z in ns

function span(projectId: string, traceId: string, spanId: string, startNs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  const endNs = startNs + 1_500_000n + 123n
  return {
    projectId, traceId, spanId, parentSpanId: null, name: `op-${spanId}`, kind: 2,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: '1.0', scopeName: 'scope', scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: { 'llm.request.messages': '[{"role":"user","content":"hi"}]' }, resourceAttributes: { 'service.name': 'svc' }, events: [], links: [],
    ...extra,
  }
}

describe('trace queries', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  const get = (url: string, key = ws.projectKey) => cp.app.inject({ url, headers: { 'x-api-key': key } })

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    await insertSpans(cp.db, [
      span(ws.projectId, traceA, '000000000000000a', t0, {
        llmModel: 'gpt-4o', llmVendor: 'openai', inputTokens: 10, outputTokens: 5, totalTokens: 15, llmResponseModel: 'gpt-4o-2024-08-06',
        cachedInputTokens: 4, reasoningTokens: 1, sessionId: 'sess-1', userId: 'user-1', inputCostUsd: 0.000025, outputCostUsd: 0.00005,
        totalCostUsd: 0.000075, costSource: 'price_table',
      }),
      span(ws.projectId, traceA, '000000000000000b', t0 + second, { parentSpanId: '000000000000000a', llmModel: 'claude' }),
      span(ws.projectId, traceB, '000000000000000c', t0 + 60n * second),
      span(ws.projectId, traceC, '000000000000000d', t0 + 3600n * second),
      span(other.projectId, traceA.replace('a', 'f'), '000000000000000e', t0),
    ])
  })
  after(() => cp.close())

  it('lists traces newest first with their summary', async () => {
    const response = await get('/api/traces')
    assert.equal(response.statusCode, 200)
    const { traces, nextCursor } = response.json()
    assert.equal(nextCursor, null)
    assert.deepEqual(traces.map((t: { traceId: string }) => t.traceId), [traceC, traceB, traceA])
    const a = traces[2]
    assert.deepEqual({ ...a, models: [...a.models].sort() }, {
      traceId: traceA, name: 'op-000000000000000a', serviceName: 'svc', startTime: '2026-01-01T00:00:00.000000Z', endTime: '2026-01-01T00:00:01.001500Z',
      durationMs: 1001.5, spanCount: 2, models: ['claude', 'gpt-4o'],
    })
  })

  it('pages with an opaque cursor', async () => {
    const first = (await get('/api/traces?limit=2')).json()
    assert.deepEqual(first.traces.map((t: { traceId: string }) => t.traceId), [traceC, traceB])
    assert.match(first.nextCursor, /^[A-Za-z0-9_-]+$/)
    const second = (await get(`/api/traces?limit=2&cursor=${first.nextCursor}`)).json()
    assert.deepEqual([second.traces.map((t: { traceId: string }) => t.traceId), second.nextCursor], [[traceA], null])
  })

  it('filters by start time with from (inclusive) and to (exclusive)', async () => {
    const window = (await get('/api/traces?from=2026-01-01T00:01:00Z&to=2026-01-01T01:00:00Z')).json()
    assert.deepEqual(window.traces.map((t: { traceId: string }) => t.traceId), [traceB])
    const dateOnly = (await get('/api/traces?from=2026-01-02')).json()
    assert.deepEqual(dateOnly.traces, [])
  })

  it('answers 400 naming the parameter for a bad limit, cursor or date', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'querystring/limit: must be >= 1'],
      ['limit=501', 'querystring/limit: must be <= 500'],
      ['limit=ten', 'querystring/limit: must be integer'],
      ['cursor=bm9wZQ', 'querystring/cursor: not a nextCursor returned by this API'],
      ['from=yesterday', 'querystring/from: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "yesterday"'],
      ['to=2026-13-45', 'querystring/to: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "2026-13-45"'],
    ]
    for (const [query, message] of cases) {
      const response = await get(`/api/traces?${query}`)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], query)
    }
  })

  it('returns one trace with every stored field of its spans, accepting upper-case ids', async () => {
    const response = await get(`/api/traces/${traceA.toUpperCase()}`)
    assert.equal(response.statusCode, 200)
    const { traceId, spans } = response.json()
    assert.equal(traceId, traceA)
    assert.equal(spans.length, 2)
    assert.deepEqual({ ...spans[0], receivedAt: 'r' }, {
      traceId: traceA, spanId: '000000000000000a', parentSpanId: null, name: 'op-000000000000000a', kind: 2,
      startTime: '2026-01-01T00:00:00.000000Z', endTime: '2026-01-01T00:00:00.001500Z',
      startTimeUnixNano: String(t0), endTimeUnixNano: String(t0 + 1_500_000n), durationNs: '1500123', traceState: null,
      status: { code: 0, message: null }, serviceName: 'svc', serviceVersion: '1.0', scopeName: 'scope', scopeVersion: null,
      llmVendor: 'openai', llmModel: 'gpt-4o', llmResponseModel: 'gpt-4o-2024-08-06', llmRequestType: null, inputTokens: 10, outputTokens: 5,
      totalTokens: 15, cachedInputTokens: 4, cacheWriteInputTokens: null, reasoningTokens: 1, sessionId: 'sess-1', userId: 'user-1',
      inputCostUsd: 0.000025, outputCostUsd: 0.00005, totalCostUsd: 0.000075, costSource: 'price_table',
      attributes: { 'llm.request.messages': '[{"role":"user","content":"hi"}]' }, resourceAttributes: { 'service.name': 'svc' },
      events: [], links: [], receivedAt: 'r',
    })
    assert.equal(spans[1].parentSpanId, '000000000000000a')
  })

  it('answers 404 for an unknown trace or another project’s, 400 for a malformed id', async () => {
    for (const id of ['0'.repeat(31) + '1', traceA.replace('a', 'f')]) {
      const response = await get(`/api/traces/${id}`)
      assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Trace not found' }])
    }
    const bad = await get('/api/traces/xyz')
    assert.deepEqual([bad.statusCode, bad.json()], [400, { message: 'params/traceId: expected 32 hex characters' }])
  })

  it('answers 401 for team keys', async () => {
    for (const response of [await get('/api/traces', ws.teamKey), await get(`/api/traces/${traceA}`, ws.teamKey)]) {
      assert.deepEqual([response.statusCode, response.json()], [401, unauthorized])
    }
  })
})
