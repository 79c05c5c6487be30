import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { sendUserFeedback } from '@langtrase/typescript-sdk'
import type { SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// /api/evaluation as the Langtrace SDKs call it: the TypeScript SDK's own sendUserFeedback over
// HTTP (hex ids), and the requests the Python SDK's SendUserFeedback makes with the decimal ids
// its root-span helper yields (strings from the sync helper, ints from the async one).

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second

function span(projectId: string, traceId: string, spanId: string): SpanInsert {
  return {
    projectId, traceId, spanId, parentSpanId: null, name: 'chat', kind: 1,
    startTimeUnixNano: String(t0), endTimeUnixNano: String(t0 + second), durationNs: String(second),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [],
  }
}

describe('Langtrace user feedback: /api/evaluation', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let baseUrl: string
  const tsTrace = '0af7651916cd43dd8448eb211c80319c'
  const tsSpan = 'b7ad6b7169203331'
  // A Python trace: its ids as Python's OpenTelemetry holds them (ints), hex stored.
  const pyTraceHex = 'f1e2d3c4b5a697887766554433221100'
  const pySpanHex = 'fedcba9876543210'
  const pyTrace = BigInt(`0x${pyTraceHex}`).toString()
  const pySpan = BigInt(`0x${pySpanHex}`).toString()
  // 16 decimal digits: an id both SDKs' forms could mean; the stored span decides.
  const ambiguousSpan = '1234567890123456'
  const ambiguousHex = BigInt(ambiguousSpan).toString(16).padStart(16, '0')

  const evaluations = async (spanId: string) => {
    const response = await cp.app.inject({ url: `/api/evaluation?spanId=${spanId}`, headers: { 'x-api-key': ws.projectKey } })
    assert.equal(response.statusCode, 200)
    return response.json().evaluations
  }
  const send = (method: 'POST' | 'PUT', body: string, query = '') =>
    cp.app.inject({ method, url: `/api/evaluation${query}`, headers: { 'x-api-key': ws.projectKey, 'content-type': 'application/json' }, payload: body })

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db)
    await storeSpans(cp.db, [span(ws.projectId, tsTrace, tsSpan), span(ws.projectId, pyTraceHex, pySpanHex), span(ws.projectId, pyTraceHex, ambiguousHex)])
    await summariseAll(cp.db)
    await cp.app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(cp.app.server.address() as AddressInfo).port}`
    process.env.LANGTRACE_API_HOST = baseUrl
    process.env.LANGTRACE_API_KEY = ws.projectKey
  })
  after(() => cp.close())

  it('TypeScript SDK: sendUserFeedback creates, then updates, the user_feedback score on the span and trace', async () => {
    assert.deepEqual(await evaluations(tsSpan), [])
    await sendUserFeedback({ userId: 'user-7', userScore: 1, traceId: tsTrace, spanId: tsSpan })
    const [first] = await evaluations(tsSpan)
    assert.deepEqual({ ...first, createdAt: undefined, updatedAt: undefined }, {
      id: `user_feedback:${tsSpan}`, spanId: tsSpan, traceId: tsTrace, userId: 'user-7', userScore: 1, ltUserId: 'user-7', ltUserScore: 1,
      createdAt: undefined, updatedAt: undefined,
    })
    // The second call finds it (GET), so the SDK PUTs: still one score, now 👎.
    await sendUserFeedback({ userId: 'user-7', userScore: -1, traceId: tsTrace, spanId: tsSpan })
    const after = await evaluations(tsSpan)
    assert.deepEqual(after.map((e: { userScore: number }) => e.userScore), [-1])
    const trace = (await cp.app.inject({ url: `/api/traces/${tsTrace}`, headers: { 'x-api-key': ws.projectKey } })).json()
    assert.deepEqual(trace.scores.map((s: { name: string; spanId: string; value: number; source: string; author: string }) => [s.name, s.spanId, s.value, s.source, s.author]), [
      ['user_feedback', tsSpan, -1, 'api', 'user-7'],
    ])
  })

  it('TypeScript SDK: a bad key is the error the SDK surfaces', async () => {
    process.env.LANGTRACE_API_KEY = 'tw_proj_wrong'
    try {
      await assert.rejects(sendUserFeedback({ userId: 'u', userScore: 1, traceId: tsTrace, spanId: tsSpan }), /An error occured when trying to get the evaluation/)
    } finally {
      process.env.LANGTRACE_API_KEY = ws.projectKey
    }
  })

  it('Python SDK: decimal string ids (sync root-span helper), spanId also in the query; POST then PUT', async () => {
    assert.deepEqual(await evaluations(pySpan), [])
    const body = JSON.stringify({ userId: 'py-user', userScore: 1, traceId: pyTrace, spanId: pySpan })
    const created = await send('POST', body, `?spanId=${pySpan}`)
    assert.equal(created.statusCode, 201)
    assert.deepEqual([created.json().evaluation.spanId, created.json().evaluation.traceId], [pySpan, pyTrace])
    const [stored] = await evaluations(pySpan)
    assert.deepEqual([stored.spanId, stored.traceId, stored.userScore], [pySpan, pyTrace, 1])
    // Stored under the hex ids the trace's spans carry.
    const scores = (await cp.app.inject({ url: `/api/scores?trace_id=${pyTraceHex}`, headers: { 'x-api-key': ws.projectKey } })).json().scores
    assert.deepEqual(scores.map((s: { spanId: string; name: string }) => [s.name, s.spanId]), [['user_feedback', pySpanHex]])
    const updated = await send('PUT', JSON.stringify({ userId: 'py-user', userScore: -1, traceId: pyTrace, spanId: pySpan }), `?spanId=${pySpan}`)
    assert.deepEqual([updated.statusCode, updated.json().evaluation.userScore], [200, -1])
  })

  it('Python SDK: ids as JSON integers beyond 2^53 (async helper) arrive exact', async () => {
    // What requests writes for Python ints: bare digits, which a plain JSON.parse would round.
    const response = await send('PUT', `{"userId": "py-user", "userScore": 1, "traceId": ${pyTrace}, "spanId": ${pySpan}}`)
    assert.deepEqual([response.statusCode, response.json().evaluation.spanId], [200, pySpan])
    assert.deepEqual((await evaluations(pySpanHex)).map((e: { userScore: number; spanId: string }) => [e.userScore, e.spanId]), [[1, pySpanHex]])
  })

  it('an id readable both ways is the span that is stored', async () => {
    const response = await send('POST', JSON.stringify({ userId: 'u', userScore: 1, traceId: pyTrace, spanId: ambiguousSpan }))
    assert.equal(response.statusCode, 201)
    const scores = (await cp.app.inject({ url: `/api/scores?span_id=${ambiguousHex}`, headers: { 'x-api-key': ws.projectKey } })).json().scores
    assert.equal(scores.length, 1)
    assert.deepEqual((await evaluations(ambiguousSpan)).map((e: { spanId: string }) => e.spanId), [ambiguousSpan])
  })

  it('answers 400 naming what is wrong, 401 without the project key', async () => {
    const cases: Array<[string, string]> = [
      [JSON.stringify({ userScore: 1, traceId: 'xyz', spanId: tsSpan }), 'body/traceId: expected 32 hex characters or a decimal integer from 1 to 2^128 − 1, got "xyz"'],
      [JSON.stringify({ userScore: 1, traceId: tsTrace, spanId: '0000000000000000' }), 'body/spanId: expected 16 hex characters or a decimal integer from 1 to 2^64 − 1, got "0000000000000000"'],
      [JSON.stringify({ userScore: 1, traceId: tsTrace, spanId: pySpan }), 'body/spanId: written in another form than body/traceId (both hex, or both decimal)'],
      [JSON.stringify({ userScore: 'up', traceId: tsTrace, spanId: tsSpan }), 'body/userScore: must be number'],
      [JSON.stringify({ userScore: 1, spanId: tsSpan }), "body: must have required property 'traceId'"],
      ['{"userScore": 1,', 'body: not valid JSON: Expected double-quoted property name in JSON at position 16 (line 1 column 17)'],
    ]
    for (const [body, message] of cases) {
      const response = await send('POST', body)
      assert.deepEqual([response.statusCode, response.json().message], [400, message], body)
    }
    const missing = await cp.app.inject({ url: '/api/evaluation', headers: { 'x-api-key': ws.projectKey } })
    assert.deepEqual([missing.statusCode, missing.json().message], [400, 'querystring/spanId: required'])
    const anonymous = await cp.app.inject({ url: `/api/evaluation?spanId=${tsSpan}` })
    assert.equal(anonymous.statusCode, 401)
  })
})
