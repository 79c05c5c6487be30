import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

const traceA = 'a'.repeat(32)
const traceB = 'b'.repeat(32)
const traceC = 'c'.repeat(32)
const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z in ns

function span(projectId: string, traceId: string, spanId: string, startNs: bigint): SpanInsert {
  const endNs = startNs + 1_000_000n
  return {
    projectId, traceId, spanId, parentSpanId: null, name: `op-${spanId}`, kind: 2,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [],
  }
}

describe('scores and score configurations', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  const headers = () => ({ 'x-api-key': ws.projectKey })
  const post = (url: string, payload: unknown, key = ws.projectKey) => cp.app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload: payload as object })
  const get = (url: string, key = ws.projectKey) => cp.app.inject({ url, headers: { 'x-api-key': key } })
  const ids = (traces: Array<{ traceId: string }>) => traces.map((trace) => trace.traceId)

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    await storeSpans(cp.db, [
      span(ws.projectId, traceA, '000000000000000a', t0),
      span(ws.projectId, traceB, '000000000000000b', t0 + 60n * second),
      span(ws.projectId, traceC, '000000000000000c', t0 + 120n * second),
    ])
    await summariseAll(cp.db)
  })
  after(() => cp.close())

  it('configures scores, refusing what does not fit a type', async () => {
    const created = await post('/api/score-configs', { name: 'quality', dataType: 'numeric', minValue: 0, maxValue: 1, description: 'judged quality' })
    assert.equal(created.statusCode, 201)
    assert.deepEqual({ ...(created.json() as object), id: undefined, createdAt: undefined }, {
      id: undefined, createdAt: undefined, projectId: ws.projectId, name: 'quality', dataType: 'numeric', minValue: 0, maxValue: 1, categories: null, description: 'judged quality',
    })
    assert.equal((await post('/api/score-configs', { name: 'tone', dataType: 'categorical', categories: [{ label: 'polite', value: 1 }, { label: 'rude', value: 0 }] })).statusCode, 201)
    assert.equal((await post('/api/score-configs', { name: 'helpful', dataType: 'boolean' })).statusCode, 201)
    const cases: Array<[unknown, number, string]> = [
      [{ name: 'quality', dataType: 'numeric' }, 409, 'The score "quality" is configured already'],
      [{ name: 'x', dataType: 'boolean', minValue: 0 }, 400, 'body/minValue: only a numeric score has a range'],
      [{ name: 'x', dataType: 'numeric', minValue: 2, maxValue: 1 }, 400, 'body/minValue: must not be above maxValue'],
      [{ name: 'x', dataType: 'categorical' }, 400, 'body/categories: required for a categorical score'],
      [{ name: 'x', dataType: 'numeric', categories: [{ label: 'a', value: 1 }] }, 400, 'body/categories: only a categorical score has categories'],
      [{ name: 'x', dataType: 'categorical', categories: [{ label: 'a', value: 1 }, { label: 'a', value: 2 }] }, 400, 'body/categories/1/label: "a" appears twice'],
      [{ name: ' x', dataType: 'numeric' }, 400, 'body/name: must match pattern "^\\S(.*\\S)?$"'],
    ]
    for (const [payload, status, message] of cases) {
      const response = await post('/api/score-configs', payload)
      assert.deepEqual([response.statusCode, response.json().message], [status, message], JSON.stringify(payload))
    }
    const list = (await get('/api/score-configs')).json().scoreConfigs
    assert.deepEqual(list.map((c: { name: string }) => c.name), ['helpful', 'quality', 'tone'])
    assert.deepEqual((await get('/api/score-configs', other.projectKey)).json(), { scoreConfigs: [] })
  })

  it('scores a trace, a span and a session, in each type, checked against the configuration', async () => {
    const numeric = await post('/api/scores', { id: 'q-a', traceId: traceA.toUpperCase(), name: 'quality', value: 0.9, comment: 'good' })
    assert.equal(numeric.statusCode, 201)
    const body = numeric.json()
    assert.deepEqual({ ...body, createdAt: undefined, updatedAt: undefined, configId: typeof body.configId }, {
      id: 'q-a', traceId: traceA, spanId: null, sessionId: null, name: 'quality', dataType: 'numeric', value: 0.9, numericValue: 0.9, comment: 'good',
      source: 'api', author: body.author, configId: 'string', evaluatorId: null, evaluatorName: null, createdAt: undefined, updatedAt: undefined,
    })
    assert.match(body.author, /^key:/)
    const boolean = (await post('/api/scores', { traceId: traceA, spanId: '000000000000000A', name: 'helpful', value: false, source: 'annotation', author: 'ann' })).json()
    assert.deepEqual([boolean.dataType, boolean.value, boolean.numericValue, boolean.spanId, boolean.source, boolean.author], ['boolean', false, 0, '000000000000000a', 'annotation', 'ann'])
    const category = (await post('/api/scores', { traceId: traceB, name: 'tone', value: 'polite' })).json()
    assert.deepEqual([category.dataType, category.value, category.numericValue], ['categorical', 'polite', 1])
    const unconfigured = (await post('/api/scores', { sessionId: 'sess-9', name: 'vibe', value: 'chill' })).json()
    assert.deepEqual([unconfigured.dataType, unconfigured.value, unconfigured.numericValue, unconfigured.traceId, unconfigured.sessionId], ['categorical', 'chill', null, null, 'sess-9'])
    const cases: Array<[unknown, string]> = [
      [{ traceId: traceA, name: 'quality', value: 2 }, 'body/value: 2 is above 1, the maximum of "quality"'],
      [{ traceId: traceA, name: 'quality', value: -1 }, 'body/value: -1 is below 0, the minimum of "quality"'],
      [{ traceId: traceA, name: 'quality', value: 'high' }, 'body/value: a numeric score takes a number, got "high"'],
      [{ traceId: traceA, name: 'quality', value: 1, dataType: 'boolean' }, 'body/dataType: the score "quality" is configured as numeric, not boolean'],
      [{ traceId: traceA, name: 'tone', value: 'angry' }, 'body/value: "angry" is not a category of "tone" ("polite", "rude")'],
      [{ traceId: traceA, name: 'helpful', value: 2 }, 'body/value: a boolean score takes true or false (or 1 or 0), got 2'],
      [{ name: 'x', value: 1 }, 'body: a score needs a traceId or a sessionId'],
      [{ sessionId: 's', spanId: '000000000000000a', name: 'x', value: 1 }, 'body/spanId: needs the traceId of its trace'],
      [{ traceId: 'xyz', name: 'x', value: 1 }, 'body/traceId: must match pattern "^[0-9a-fA-F]{32}$"'],
      [{ traceId: traceA, name: 'x', value: 1, extra: 1 }, 'body: must NOT have additional properties'],
      [{ traceId: traceA, name: 'x', value: 1, source: 'robot' }, 'body/source: must be equal to one of the allowed values'],
    ]
    for (const [payload, message] of cases) {
      const response = await post('/api/scores', payload)
      assert.deepEqual([response.statusCode, response.json().message], [400, message], JSON.stringify(payload))
    }
  })

  it('is idempotent by the caller’s id: resent, the same row; changed, replaced (200)', async () => {
    const again = await post('/api/scores', { id: 'q-a', traceId: traceA, name: 'quality', value: 0.9, comment: 'good' })
    assert.equal(again.statusCode, 200)
    const changed = await post('/api/scores', { id: 'q-a', traceId: traceA, name: 'quality', value: 0.7, comment: 'fine' })
    assert.deepEqual([changed.statusCode, changed.json().value, changed.json().comment], [200, 0.7, 'fine'])
    const rows = (await get(`/api/scores?trace_id=${traceA}&name=quality`)).json().scores
    assert.deepEqual(rows.map((s: { id: string; value: number }) => [s.id, s.value]), [['q-a', 0.7]])
    // Another project's score of the same id is another score.
    assert.equal((await post('/api/scores', { id: 'q-a', traceId: traceA, name: 'quality', value: 5 }, other.projectKey)).statusCode, 201)
  })

  it('lists scores newest first with filters and pages, deletes one', async () => {
    const all = (await get('/api/scores')).json()
    assert.equal(all.scores.length, 4)
    assert.deepEqual((await get('/api/scores?source=annotation')).json().scores.map((s: { name: string }) => s.name), ['helpful'])
    assert.deepEqual((await get('/api/scores?session_id=sess-9')).json().scores.map((s: { name: string }) => s.name), ['vibe'])
    assert.deepEqual((await get('/api/scores?span_id=000000000000000a')).json().scores.map((s: { name: string }) => s.name), ['helpful'])
    assert.deepEqual((await get('/api/scores?from=2999-01-01T00:00:00Z')).json().scores, [])
    const first = (await get('/api/scores?limit=3')).json()
    const rest = (await get(`/api/scores?limit=3&cursor=${first.nextCursor}`)).json()
    assert.deepEqual([first.scores.length, rest.scores.length, rest.nextCursor], [3, 1, null])
    assert.deepEqual([...first.scores, ...rest.scores].map((s: { id: string }) => s.id), all.scores.map((s: { id: string }) => s.id))
    assert.equal((await get('/api/scores?cursor=nope')).json().message, 'querystring/cursor: not a nextCursor returned by this API')
    // A team key names the project; another team's project is missing.
    assert.equal((await get(`/api/scores?project_id=${ws.projectId}`, ws.teamKey)).json().scores.length, 4)
    assert.equal((await get(`/api/scores?project_id=${other.projectId}`, ws.teamKey)).statusCode, 404)
    assert.deepEqual((await get('/api/scores', 'tw_proj_nope')).json(), unauthorized)

    const vibe = all.scores.find((s: { name: string }) => s.name === 'vibe')
    assert.equal((await cp.app.inject({ method: 'DELETE', url: `/api/scores/${vibe.id}`, headers: { 'x-api-key': other.projectKey } })).statusCode, 404)
    assert.equal((await cp.app.inject({ method: 'DELETE', url: `/api/scores/${vibe.id}`, headers: headers() })).statusCode, 204)
    assert.equal((await cp.app.inject({ method: 'DELETE', url: `/api/scores/${vibe.id}`, headers: headers() })).statusCode, 404)
  })

  it('shows a trace’s scores with the trace, and in the list', async () => {
    const trace = (await get(`/api/traces/${traceA}`)).json()
    assert.deepEqual(trace.scores.map((s: { name: string; spanId: string | null }) => [s.name, s.spanId]), [['quality', null], ['helpful', '000000000000000a']])
    const list = (await get('/api/traces')).json().traces
    assert.deepEqual(list.map((t: { scores: Array<{ name: string }> }) => t.scores.map((s) => s.name)), [[], ['tone'], ['quality', 'helpful']])
  })

  it('filters and sorts the trace list by a score', async () => {
    await post('/api/scores', { traceId: traceB, name: 'quality', value: 0.2 })
    assert.deepEqual(ids((await get('/api/traces?score_name=quality')).json().traces), [traceB, traceA])
    assert.deepEqual(ids((await get('/api/traces?score_name=quality&min_score=0.5')).json().traces), [traceA])
    assert.deepEqual(ids((await get('/api/traces?score_name=quality&max_score=0.5')).json().traces), [traceB])
    assert.deepEqual(ids((await get('/api/traces?score_name=tone&score_value=polite')).json().traces), [traceB])
    assert.deepEqual(ids((await get('/api/traces?score_name=tone&score_value=rude')).json().traces), [])
    assert.deepEqual(ids((await get('/api/traces?score_name=helpful&score_value=false')).json().traces), [traceA])
    // The traces with that score, highest average first; a page at a time.
    assert.deepEqual(ids((await get('/api/traces?score_name=quality&sort=score')).json().traces), [traceA, traceB])
    assert.deepEqual(ids((await get('/api/traces?score_name=quality&sort=score&order=asc')).json().traces), [traceB, traceA])
    const page = (await get('/api/traces?score_name=quality&sort=score&limit=1')).json()
    assert.deepEqual(ids(page.traces), [traceA])
    assert.deepEqual(ids((await get(`/api/traces?score_name=quality&sort=score&limit=1&cursor=${page.nextCursor}`)).json().traces), [traceB])
    for (const [query, message] of [
      ['min_score=1', 'querystring/min_score: needs score_name'],
      ['score_value=x', 'querystring/score_value: needs score_name'],
      ['sort=score', 'querystring/sort: sort=score needs score_name'],
    ]) {
      const response = await get(`/api/traces?${query}`)
      assert.deepEqual([response.statusCode, response.json().message], [400, message])
    }
  })

  it('adds each score’s average to usage, per bucket', async () => {
    const now = new Date()
    const from = new Date(now.getTime() - 3600_000).toISOString()
    const to = new Date(now.getTime() + 3600_000).toISOString()
    const { scores } = (await get(`/api/usage?from=${from}&to=${to}&bucket=hour`)).json()
    const quality = scores.totals.find((s: { name: string }) => s.name === 'quality')
    assert.deepEqual([quality.count, Math.round(quality.average * 1e9) / 1e9], [2, 0.45])
    assert.deepEqual(scores.totals.map((s: { name: string }) => s.name), ['helpful', 'quality', 'tone'])
    const buckets = scores.series.filter((s: { name: string }) => s.name === 'quality')
    assert.equal(buckets.reduce((n: number, s: { count: number }) => n + s.count, 0), 2)
    assert.match(buckets[0].bucket, /^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/)
  })

  it('deletes a trace’s scores with the trace', async () => {
    assert.equal((await cp.app.inject({ method: 'DELETE', url: `/api/traces/${traceB}?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })).statusCode, 204)
    assert.deepEqual((await get(`/api/scores?trace_id=${traceB}`)).json().scores, [])
  })
})
