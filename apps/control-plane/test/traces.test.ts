import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SpanInsert } from '@tracewell/db'
import type { AttributeMap } from '@tracewell/span-schema'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { mintApiKey } from '../src/mint-api-key.ts'
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
    // Plain strings where OTLP has AnyValues: what older records and hand-made spans hold, stored as given.
    attributes: { 'llm.request.messages': '[{"role":"user","content":"hi"}]' } as unknown as AttributeMap, resourceAttributes: { 'service.name': 'svc' } as unknown as AttributeMap, events: [], links: [],
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
    await storeSpans(cp.db, [
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
    await summariseAll(cp.db)
  })
  after(() => cp.close())

  it('lists traces newest first with their summary', async () => {
    const response = await get('/api/traces')
    assert.equal(response.statusCode, 200)
    const { traces, nextCursor } = response.json()
    assert.equal(nextCursor, null)
    assert.deepEqual(traces.map((t: { traceId: string }) => t.traceId), [traceC, traceB, traceA])
    const a = traces[2]
    assert.deepEqual(a, {
      traceId: traceA, name: 'op-000000000000000a', serviceName: 'svc', startTime: '2026-01-01T00:00:00.000000Z', endTime: '2026-01-01T00:00:01.001500Z',
      durationMs: 1001.5, spanCount: 2, errorCount: 0, models: ['claude', 'gpt-4o'], inputTokens: 10, outputTokens: 5, totalTokens: 15,
      costUsd: 0.000075, tokensEstimated: false, sessionId: 'sess-1', userId: 'user-1', scores: [], commentCount: 0,
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
      ['cursor=bm9wZQ', 'querystring/cursor: not a nextCursor returned by this API for this sort'],
      [`cursor=${Buffer.from(JSON.stringify(['time', '99999999999999999999', 'a'.repeat(32)])).toString('base64url')}`, 'querystring/cursor: not a nextCursor returned by this API for this sort'],
      [`cursor=${Buffer.from(JSON.stringify(['duration', '5', 'a'.repeat(32)])).toString('base64url')}`, 'querystring/cursor: not a nextCursor returned by this API for this sort'],
      ['attr=novalue', 'querystring/attr: expected key=value, got "novalue"'],
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
      inputCostUsd: 0.000025, outputCostUsd: 0.00005, totalCostUsd: 0.000075, costSource: 'price_table', tokensEstimated: false,
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

  it('takes a team key with project_id of one of its projects; another team’s project is 404', async () => {
    const missing = await get('/api/traces', ws.teamKey)
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: 'querystring/project_id: required with a team key or a signed-in session' }])
    const mine = await get(`/api/traces?project_id=${ws.projectId}`, ws.teamKey)
    assert.deepEqual(mine.json().traces.map((t: { traceId: string }) => t.traceId), [traceC, traceB, traceA])
    const trace = await get(`/api/traces/${traceA}?project_id=${ws.projectId}`, ws.teamKey)
    assert.equal(trace.json().spans.length, 2)
    const theirs = await get(`/api/traces?project_id=${other.projectId}`, ws.teamKey)
    assert.deepEqual([theirs.statusCode, theirs.json()], [404, { message: 'Project not found' }])
    const bad = await get('/api/traces', 'tw_team_not-a-key-at-all-0123456789')
    assert.deepEqual([bad.statusCode, bad.json()], [401, unauthorized])
  })

  it('filters that combine, each one narrowing', async () => {
    const ids = async (query: string) => (await get(`/api/traces?${query}`)).json().traces.map((t: { traceId: string }) => t.traceId)
    assert.deepEqual(await ids('model=claude'), [traceA])
    assert.deepEqual(await ids('vendor=openai'), [traceA])
    assert.deepEqual(await ids('service=svc&model=gpt-4o'), [traceA])
    assert.deepEqual(await ids('session=sess-1'), [traceA])
    assert.deepEqual(await ids('user=user-1&model=nothing'), [])
    assert.deepEqual(await ids('status=error'), [])
    assert.deepEqual(await ids('status=ok'), [traceC, traceB, traceA])
    assert.deepEqual(await ids('name=OP-000000000000000C'), [traceB], 'root name, case-insensitive')
    assert.deepEqual(await ids('name=000000000000000b'), [traceA], 'any span name')
    assert.deepEqual(await ids('min_duration_ms=1000'), [traceA])
    assert.deepEqual(await ids('min_cost=0.00007'), [traceA])
    assert.deepEqual(await ids(`attr=${encodeURIComponent('service.name=svc')}&attr=${encodeURIComponent('llm.request.messages=[{"role":"user","content":"hi"}]')}`), [traceC, traceB, traceA])
    assert.deepEqual(await ids('q=CONTENT'), [traceC, traceB, traceA], 'text in the attributes, case-insensitive')
    assert.deepEqual(await ids('q=nowhere-to-be-found'), [])
    assert.deepEqual(await ids('q=100%25'), [], 'wildcards are taken literally')
  })

  it('sorts by duration, cost and tokens, each paged with its own cursor', async () => {
    const first = (await get('/api/traces?sort=duration&limit=1')).json()
    assert.deepEqual(first.traces.map((t: { traceId: string }) => t.traceId), [traceA])
    const rest = (await get(`/api/traces?sort=duration&limit=5&cursor=${first.nextCursor}`)).json()
    assert.equal(rest.traces.length, 2)
    assert.ok(!rest.traces.some((t: { traceId: string }) => t.traceId === traceA))
    const wrongSort = await get(`/api/traces?sort=cost&cursor=${first.nextCursor}`)
    assert.equal(wrongSort.statusCode, 400)
    const byCost = (await get('/api/traces?sort=cost')).json()
    assert.equal(byCost.traces[0].traceId, traceA)
    // Traces B and C reported no tokens: unknown, listed after every known count in either order.
    // Ties among the unknown go by trace id, in the direction asked for.
    const expected = { asc: [[traceA, 15], [traceB, null], [traceC, null]], desc: [[traceA, 15], [traceC, null], [traceB, null]] }
    for (const order of ['asc', 'desc'] as const) {
      const byTokens = (await get(`/api/traces?sort=tokens&order=${order}`)).json()
      assert.deepEqual(byTokens.traces.map((t: { traceId: string; totalTokens: number | null }) => [t.traceId, t.totalTokens]), expected[order], order)
      // A trace a page: the cursors lead from the known counts into the unknown ones and through them.
      const paged: string[] = []
      let cursor: string | null = null
      do {
        const page: { traces: Array<{ traceId: string }>; nextCursor: string | null } = (await get(`/api/traces?sort=tokens&order=${order}&limit=1${cursor === null ? '' : `&cursor=${cursor}`}`)).json()
        paged.push(...page.traces.map((t) => t.traceId))
        cursor = page.nextCursor
      } while (cursor !== null && paged.length < 5)
      assert.deepEqual(paged, expected[order].map(([traceId]) => traceId), `${order}, a trace a page`)
    }
  })

  it('lists sessions and one session’s traces', async () => {
    const sessions = (await get('/api/sessions')).json()
    assert.deepEqual(sessions, {
      sessions: [{ sessionId: 'sess-1', userId: 'user-1', firstSeen: '2026-01-01T00:00:00.000000Z', lastSeen: '2026-01-01T00:00:01.001500Z', traceCount: 1, totalTokens: 15, costUsd: 0.000075 }],
      nextCursor: null,
    })
    const one = (await get('/api/sessions/sess-1')).json()
    assert.deepEqual([one.sessionId, one.userId, one.traces.map((t: { traceId: string }) => t.traceId)], ['sess-1', 'user-1', [traceA]])
    const unknown = await get('/api/sessions/nope')
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: 'Session not found' }])
  })

  it('answers usage totals and series by model, in a time zone', async () => {
    const usage = await get('/api/usage?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&bucket=hour&group_by=model&tz=Europe/Berlin')
    assert.equal(usage.statusCode, 200)
    const { totals, series } = usage.json()
    assert.deepEqual({ ...totals, latencyP50Ms: undefined, latencyP95Ms: undefined }, {
      traces: 3, spans: 4, errors: 0, inputTokens: 10, outputTokens: 5, costUsd: 0.000075, latencyP50Ms: undefined, latencyP95Ms: undefined,
    })
    assert.ok(totals.latencyP50Ms > 1.4 && totals.latencyP50Ms < 1.6, String(totals.latencyP50Ms))
    const gpt = series.find((row: { group: string | null }) => row.group === 'gpt-4o')
    // Hours of Berlin (UTC+1 in January): 01:00 local is 00:00 UTC.
    assert.deepEqual([gpt.bucket, gpt.spans, gpt.inputTokens], ['2026-01-01T00:00:00.000Z', 1, 10])
    const badZone = await get('/api/usage?tz=Mars/Olympus')
    assert.deepEqual([badZone.statusCode, badZone.json()], [400, { message: 'querystring/tz: not a time zone: "Mars/Olympus"' }])
    const tooMany = await get('/api/usage?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&bucket=hour')
    assert.equal(tooMany.statusCode, 400)
  })

  it('exports a trace as OTLP JSON that ingest accepts again', async () => {
    const exported = (await get(`/api/traces/${traceA}/otlp`)).json()
    const spans = exported.resourceSpans.flatMap((r: { scopeSpans: Array<{ spans: unknown[] }> }) => r.scopeSpans.flatMap((s) => s.spans))
    assert.equal(spans.length, 2)
    assert.deepEqual(exported.resourceSpans[0].resource.attributes, [{ key: 'service.name', value: 'svc' }])
    assert.deepEqual(spans[0].attributes, [{ key: 'llm.request.messages', value: '[{"role":"user","content":"hi"}]' }])
  })

  it('deletes a trace and its summary with a team key (or a key with the write scope), not a read key', async () => {
    const { secret: readKey } = await mintApiKey(cp.db, 'project', { teamId: ws.teamId, projectId: ws.projectId }, undefined, { scopes: ['ingest', 'read'] })
    const withReadKey = await cp.app.inject({ method: 'DELETE', url: `/api/traces/${traceC}`, headers: { 'x-api-key': readKey } })
    assert.deepEqual([withReadKey.statusCode, withReadKey.json()], [403, { message: 'Not allowed: this needs the permission traces:delete (docs/permissions.md)' }])
    const deleted = await cp.app.inject({ method: 'DELETE', url: `/api/traces/${traceC}?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.equal(deleted.statusCode, 204)
    assert.equal((await get(`/api/traces/${traceC}`)).statusCode, 404)
    assert.ok(!(await get('/api/traces')).json().traces.some((t: { traceId: string }) => t.traceId === traceC))
    const again = await cp.app.inject({ method: 'DELETE', url: `/api/traces/${traceC}?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.equal(again.statusCode, 404)
  })
})
