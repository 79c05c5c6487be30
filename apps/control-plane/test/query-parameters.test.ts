import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { addPerson, csrf, signIn } from './people.helper.ts'
import { adminKey, seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// What the list routes take: every unknown query parameter refused by name, on every route;
// the bounds users reach for (min/max duration, cost and tokens, the [from, to) window); token
// counts no span reported shown and sorted as unknown; estimated counts marked.

const second = 1_000_000_000n
const hour = 3600n * second
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z
const traceId = (n: number) => n.toString(16).padStart(32, '0')
const [cheap, dear, untokened, estimated] = [1, 2, 3, 4].map(traceId) as [string, string, string, string]

function span(projectId: string, trace: string, startNs: bigint, durationMs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  const endNs = startNs + durationMs * 1_000_000n
  return {
    projectId, traceId: trace, spanId: trace.slice(16), parentSpanId: null, name: `op-${trace.slice(-1)}`, kind: 2,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [],
    ...extra,
  }
}

const llm = (input: number, output: number, cost: number): Partial<SpanInsert> => ({
  llmVendor: 'openai', llmModel: 'gpt-4o-mini', llmRequestType: 'chat', inputTokens: input, outputTokens: output, totalTokens: input + output,
  totalCostUsd: cost, costSource: 'price_table',
})

describe('query parameters of the list routes', () => {
  let cp: TestControlPlane
  let ws: Workspace
  const get = (url: string, key = ws.projectKey) => cp.app.inject({ url, headers: { 'x-api-key': key } })
  const ids = async (query: string) => {
    const response = await get(`/api/traces?${query}`)
    assert.equal(response.statusCode, 200, `${query}: ${response.body}`)
    return response.json().traces.map((t: { traceId: string }) => t.traceId)
  }

  before(async () => {
    // With sessions, so that the owner's own routes are walked with the owner's session.
    cp = await startControlPlane({ SESSION_SECRET: 'session-secret-for-tests-0123456789abcdef' })
    ws = await seedWorkspace(cp.db)
    await storeSpans(cp.db, [
      // 120 tokens, $0.0001, 1.5 s, in session s-1.
      span(ws.projectId, cheap, t0, 1500n, { ...llm(100, 20, 0.0001), sessionId: 's-1' }),
      // 6,000 tokens, $0.01, 20 s, an hour later, in session s-1.
      span(ws.projectId, dear, t0 + hour, 20_000n, { ...llm(5000, 1000, 0.01), sessionId: 's-1' }),
      // No span reported tokens or a cost: unknown, not 0. Session s-2, 2 h after t0.
      span(ws.projectId, untokened, t0 + 2n * hour, 10n, { sessionId: 's-2' }),
      // A streamed call whose counts the instrumentation estimated, 3 h after t0.
      span(ws.projectId, estimated, t0 + 3n * hour, 300n, { ...llm(7, 6, 0.000005), tokensEstimated: true }),
    ])
    await summariseAll(cp.db)
  })
  after(() => cp.close())

  it('refuses an unknown query parameter by name on every route of the OpenAPI document', async () => {
    await addPerson(cp.db, ws.teamId, 'owner', 'owner@acme.example')
    const ownerCookie = await signIn(cp.app, 'owner@acme.example')
    const document = (await cp.app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, unknown>> }
    const routes = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })))
    assert.ok(routes.length > 40, `${routes.length} routes`)
    let checked = 0
    let unconfigured = 0
    for (const { method, path } of routes) {
      // GET /api/promptset takes any `variables.<name>` (the Langtrace SDKs'): checked below.
      if (path === '/api/promptset') continue
      // A provider's sign-in steps answer that single sign-on is not set up before reading a query.
      if (path.startsWith('/api/auth/oidc/') || path.startsWith('/api/auth/saml/')) {
        unconfigured++
        continue
      }
      // The team and project are the caller's own: authorize admits only those before the query is read.
      const url = `${path.replace('{traceId}', traceId(9)).replace('{projectId}', ws.projectId).replace('{teamId}', ws.teamId).replace(/\{[^}]+\}/g, 'x')}?project_id=${ws.projectId}&colour=red`
      let answer
      // Keys first, then the team owner's session (an owner's settings, what only people do).
      for (const headers of [{ 'x-api-key': ws.teamKey }, { 'x-api-key': ws.projectKey }, { 'x-admin-key': adminKey }, { cookie: ownerCookie, ...csrf }]) {
        answer = await cp.app.inject({ method: method as 'GET', url, headers })
        if (answer.statusCode !== 401 && answer.statusCode !== 403) break
      }
      assert.equal(answer?.statusCode, 400, `${method} ${path}: ${answer?.body}`)
      assert.match(answer.json().message, /^querystring: unknown query parameters? .*"colour"/, `${method} ${path}`)
      checked++
    }
    assert.equal(checked, routes.length - 1 - unconfigured)
  })

  it('names every unknown parameter at once, with those the route takes', async () => {
    const response = await get('/api/sessions?colour=red&limit=5&size=9')
    assert.equal(response.statusCode, 400)
    assert.deepEqual(response.json(), {
      message:
        'querystring: unknown query parameters "colour", "size" (this route takes: project_id, limit, cursor, from, to, user, min_duration_ms, max_duration_ms, min_cost, max_cost, min_tokens, max_tokens, include_tracewell_calls)',
    })
    const none = await get('/api/projects?x=1', ws.teamKey)
    assert.deepEqual([none.statusCode, none.json()], [400, { message: 'querystring: unknown query parameter "x" (this route takes none)' }])
    // The prompt lookup keeps taking the SDKs' variables.<name>: a 404 for the unknown registry, not a 400.
    assert.equal((await get('/api/promptset?promptset_id=nope&variables.name=Ann')).statusCode, 404)
  })

  it('bounds traces by cost, duration and tokens, inclusive; unknown figures match no bound', async () => {
    assert.deepEqual(await ids('max_cost=0.0001'), [estimated, cheap])
    assert.deepEqual(await ids('min_cost=0.0001&max_cost=0.01'), [dear, cheap])
    assert.deepEqual(await ids('max_duration_ms=1500'), [estimated, untokened, cheap])
    assert.deepEqual(await ids('min_duration_ms=1500&max_duration_ms=20000'), [dear, cheap])
    assert.deepEqual(await ids('max_tokens=120'), [estimated, cheap])
    assert.deepEqual(await ids('min_tokens=121'), [dear])
    assert.deepEqual(await ids('min_tokens=0'), [estimated, dear, cheap], 'a trace of unknown tokens is not "at least 0"')
    const crossed = await get('/api/traces?min_cost=2&max_cost=1')
    assert.deepEqual([crossed.statusCode, crossed.json()], [400, { message: 'querystring/max_cost: less than min_cost (1 < 2)' }])
    const fraction = await get('/api/traces?max_tokens=1.5')
    assert.equal(fraction.statusCode, 400)
    assert.match(fraction.json().message, /^querystring\/max_tokens: /)
  })

  it('takes a [from, to) window, and refuses an empty one', async () => {
    assert.deepEqual(await ids('from=2026-01-01T01:00:00Z&to=2026-01-01T03:00:00Z'), [untokened, dear])
    assert.deepEqual(await ids('from=2026-01-01T01:00:00.001Z'), [estimated, untokened], 'to the millisecond')
    for (const url of ['/api/traces', '/api/sessions', '/api/scores', '/api/usage']) {
      const empty = await get(`${url}?from=2026-01-01T01:00:00Z&to=2026-01-01T01:00:00Z`)
      assert.equal(empty.statusCode, 400, url)
      assert.match(empty.json().message, /^querystring\/from: must be before to/, url)
    }
  })

  it('windows a registry’s label history by when the moves were made', async () => {
    const post = (url: string, body: unknown) => cp.app.inject({ method: 'POST', url, headers: { 'x-api-key': ws.projectKey, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    const registry = (await post('/api/promptsets', { name: 'windowed' })).json().id as string
    const before = new Date()
    assert.equal((await post(`/api/promptsets/${registry}/prompts`, { value: 'Hi', model: 'gpt-4o-mini', live: true })).statusCode, 201)
    const after = new Date(Date.now() + 1)
    const moves = async (query: string) => (await get(`/api/promptsets/${registry}/label-history?${query}`)).json().moves.map((move: { label: string }) => move.label)
    assert.deepEqual(await moves(''), ['production'])
    assert.deepEqual(await moves(`from=${new Date(before.getTime() - 1).toISOString()}&to=${after.toISOString()}`), ['production'])
    assert.deepEqual(await moves(`from=${after.toISOString()}`), [])
    assert.deepEqual(await moves(`to=${new Date(before.getTime() - 1).toISOString()}`), [])
    assert.equal((await get(`/api/promptsets/${registry}/label-history?from=${after.toISOString()}&to=${before.toISOString()}`)).statusCode, 400)
  })

  it('shows and sorts unknown tokens as null, last in both directions, with the cost likewise', async () => {
    const rows = (await get('/api/traces')).json().traces as Array<{ traceId: string; inputTokens: number | null; outputTokens: number | null; totalTokens: number | null; costUsd: number | null }>
    const untokenedRow = rows.find((row) => row.traceId === untokened)
    assert.deepEqual([untokenedRow?.inputTokens, untokenedRow?.outputTokens, untokenedRow?.totalTokens, untokenedRow?.costUsd], [null, null, null, null])
    const sorted = async (sort: string, order: string) => (await get(`/api/traces?sort=${sort}&order=${order}`)).json().traces.map((t: { traceId: string }) => t.traceId)
    assert.deepEqual(await sorted('tokens', 'desc'), [dear, cheap, estimated, untokened])
    assert.deepEqual(await sorted('tokens', 'asc'), [estimated, cheap, dear, untokened])
    assert.deepEqual(await sorted('cost', 'desc'), [dear, cheap, estimated, untokened])
    assert.deepEqual(await sorted('cost', 'asc'), [estimated, cheap, dear, untokened])
    // Paged one at a time, the cursor crosses from known to unknown in either direction.
    for (const order of ['asc', 'desc']) {
      const seen: string[] = []
      let cursor = ''
      do {
        const page = (await get(`/api/traces?sort=tokens&order=${order}&limit=1${cursor ? `&cursor=${cursor}` : ''}`)).json()
        seen.push(...page.traces.map((t: { traceId: string }) => t.traceId))
        cursor = page.nextCursor ?? ''
      } while (cursor !== '')
      assert.deepEqual(seen, await sorted('tokens', order), order)
    }
  })

  it('bounds sessions by their totals; a session of unknown tokens shows null', async () => {
    const sessions = async (query: string) => (await get(`/api/sessions?${query}`)).json().sessions.map((s: { sessionId: string; totalTokens: number | null }) => [s.sessionId, s.totalTokens])
    assert.deepEqual(await sessions(''), [['s-2', null], ['s-1', 6120]])
    assert.deepEqual(await sessions('max_tokens=1000'), [])
    assert.deepEqual(await sessions('min_tokens=1000&max_cost=0.0102'), [['s-1', 6120]])
    assert.deepEqual(await sessions('max_duration_ms=1000'), [['s-2', null]])
    // With a window the figures are of the traces in it (and the bounds apply to those).
    assert.deepEqual(await sessions('to=2026-01-01T00:30:00Z'), [['s-1', 120]])
    assert.deepEqual(await sessions('to=2026-01-01T00:30:00Z&max_tokens=120'), [['s-1', 120]])
    assert.deepEqual(await sessions('to=2026-01-01T00:30:00Z&max_tokens=119'), [])
  })

  it('answers usage tokens as null where no span reported one, and sums the known', async () => {
    const usage = (await get('/api/usage?from=2026-01-01T00:00:00Z&to=2026-01-01T04:00:00Z&bucket=hour')).json()
    assert.deepEqual([usage.totals.inputTokens, usage.totals.outputTokens], [5107, 1026])
    assert.deepEqual(
      usage.series.map((row: { bucket: string; inputTokens: number | null; outputTokens: number | null }) => [row.bucket.slice(11, 13), row.inputTokens, row.outputTokens]),
      [['00', 100, 20], ['01', 5000, 1000], ['02', null, null], ['03', 7, 6]],
    )
  })

  it('marks estimated tokens on the span and on its trace', async () => {
    const rows = (await get('/api/traces')).json().traces as Array<{ traceId: string; tokensEstimated: boolean }>
    assert.deepEqual(rows.map((row) => [row.traceId, row.tokensEstimated]), [[estimated, true], [untokened, false], [dear, false], [cheap, false]])
    const [estimatedSpan] = (await get(`/api/traces/${estimated}`)).json().spans
    const [exactSpan] = (await get(`/api/traces/${cheap}`)).json().spans
    assert.deepEqual([estimatedSpan.tokensEstimated, exactSpan.tokensEstimated], [true, false])
  })
})
