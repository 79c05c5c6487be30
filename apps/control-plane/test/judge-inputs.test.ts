import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createEvaluator, createLlmConnection, recordScore, type SpanInsert } from '@tracewell/db'
import { selfServiceName } from '@tracewell/llm-calls'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

// What a person sees of judges and of Tracewell's own calls (issue 48 §8): the preview of a
// judge's prompt on a trace, the evaluator's name on its scores, and the trace list, sessions and
// usage without the playground's, experiments' and judges' traces unless asked.

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z
const appTrace = 'a'.repeat(32)
const emptyTrace = 'b'.repeat(32)
const ownTrace = 'c'.repeat(32)
const s = (value: string) => ({ stringValue: value })

function span(projectId: string, traceId: string, startNs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  const endNs = startNs + 2_000_000n
  return {
    projectId, traceId, spanId: randomBytes(8).toString('hex'), parentSpanId: null, name: 'chat', kind: 3,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'shop', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 100, outputTokens: 20, totalTokens: 120,
    attributes: { 'gen_ai.prompt.0.role': s('user'), 'gen_ai.prompt.0.content': s('Where is my order?'), 'gen_ai.completion.0.content': s('It ships today.') },
    resourceAttributes: { 'service.name': s('shop') }, events: [], links: [], userId: 'u1', sessionId: 'sess-1', totalCostUsd: 0.25,
    ...extra,
  }
}

/** A judge's call, as @tracewell/llm-calls records one: its own service, no user, no session. */
const ownCall = (projectId: string, startNs: bigint, model: string) =>
  span(projectId, ownTrace, startNs, {
    serviceName: selfServiceName, resourceAttributes: { 'service.name': s(selfServiceName) }, llmModel: model, userId: null, sessionId: null,
    inputTokens: 7, outputTokens: 3, totalTokens: 10, totalCostUsd: 0.5,
  })

describe('judge inputs and Tracewell’s own calls', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let evaluatorId: string
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, key = ws.projectKey) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) })

  before(async () => {
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex') })
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    await storeSpans(cp.db, [
      span(ws.projectId, appTrace, t0),
      span(ws.projectId, emptyTrace, t0 + second, { attributes: { 'http.route': s('/health') }, llmModel: null, llmVendor: null, inputTokens: null, outputTokens: null, totalTokens: null, totalCostUsd: null }),
      ownCall(ws.projectId, t0 + 2n * second, 'judge-model'),
      ownCall(ws.projectId, t0 + 3n * second, 'gpt-4o'),
    ])
    await summariseAll(cp.db)
    const connection = await createLlmConnection(cp.db, { projectId: ws.projectId, name: 'c', provider: 'openai', baseUrl: 'http://judge', apiKeySealed: 'v1:x', apiKeyHint: '…' })
    evaluatorId = (await createEvaluator(cp.db, {
      projectId: ws.projectId, name: 'Helpfulness', connectionId: connection.id, model: 'judge-model', prompt: '{{output}}', promptRef: null, scoreName: 'helpful', filter: {}, samplingRate: 1,
    })).id
  })
  after(() => cp.close())

  describe('the preview of a judge’s prompt', () => {
    it('fills the template with the trace’s input and output as the judge would', async () => {
      const response = await call('POST', `/api/evaluators/preview?project_id=${ws.projectId}`, { prompt: 'Q: {{input}}\nA: {{ output }}', traceId: appTrace.toUpperCase() }, ws.teamKey)
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual(response.json(), { input: 'user: Where is my order?', output: 'assistant: It ships today.', prompt: 'Q: user: Where is my order?\nA: assistant: It ships today.', skipped: null })
    })

    it('answers the reason a judge would skip the trace instead of a prompt', async () => {
      const response = await call('POST', '/api/evaluators/preview', { prompt: 'Rate {{output}}', traceId: emptyTrace })
      assert.deepEqual([response.statusCode, response.json()], [200, { input: null, output: null, prompt: null, skipped: 'the trace has no output to judge (the template uses {{output}})' }])
    })

    it('fills a promptset prompt by label', async () => {
      const promptset = (await call('POST', '/api/promptsets', { name: 'judges' })).json().id as string
      assert.equal((await call('POST', `/api/promptsets/${promptset}/prompts`, { value: 'Was "{{output}}" helpful?', model: 'gpt-4o', live: true })).statusCode, 201)
      const response = await call('POST', '/api/evaluators/preview', { promptRef: { name: 'judges', label: 'production' }, traceId: appTrace })
      assert.deepEqual([response.statusCode, response.json().prompt], [200, 'Was "assistant: It ships today." helpful?'])
      const missing = await call('POST', '/api/evaluators/preview', { promptRef: { name: 'judges', label: 'staging' }, traceId: appTrace })
      assert.deepEqual([missing.statusCode, missing.json()], [400, { message: 'body/promptRef: no prompt registry "judges" with a version labelled "staging"' }])
    })

    it('refuses a body without exactly one template, a bad trace id, another project’s trace, and no key', async () => {
      const both = await call('POST', '/api/evaluators/preview', { prompt: '{{output}}', promptRef: { name: 'judges', label: 'production' }, traceId: appTrace })
      assert.deepEqual([both.statusCode, both.json()], [400, { message: 'body: give exactly one of prompt and promptRef' }])
      const neither = await call('POST', '/api/evaluators/preview', { traceId: appTrace })
      assert.deepEqual([neither.statusCode, neither.json()], [400, { message: 'body: give exactly one of prompt and promptRef' }])
      const badId = await call('POST', '/api/evaluators/preview', { prompt: '{{output}}', traceId: 'not-hex' })
      assert.deepEqual([badId.statusCode, badId.json()], [400, { message: 'body/traceId: must match pattern "^[0-9a-fA-F]{32}$"' }])
      const foreign = await call('POST', '/api/evaluators/preview', { prompt: '{{output}}', traceId: appTrace }, other.projectKey)
      assert.deepEqual([foreign.statusCode, foreign.json()], [404, { message: 'Trace not found' }])
      const anonymous = await cp.app.inject({ method: 'POST', url: '/api/evaluators/preview', payload: { prompt: '{{output}}', traceId: appTrace } })
      assert.deepEqual([anonymous.statusCode, anonymous.json()], [401, unauthorized])
    })
  })

  it('names the evaluator on its scores, null on other scores', async () => {
    await recordScore(cp.db, {
      projectId: ws.projectId, id: `eval:${evaluatorId}:${appTrace}`, traceId: appTrace, spanId: null, sessionId: null, name: 'helpful', value: 1,
      comment: 'answers the question', source: 'eval', author: `evaluator:${evaluatorId}`, evaluatorId,
    })
    const thumbs = await call('POST', '/api/scores', { id: 'thumbs', traceId: appTrace, name: 'thumbs', value: true })
    assert.equal(thumbs.statusCode, 201, thumbs.body)
    const names = (scores: Array<{ id: string; evaluatorId: string | null; evaluatorName: string | null }>) =>
      scores.map((score) => [score.id, score.evaluatorId, score.evaluatorName]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))
    const expected = [[`eval:${evaluatorId}:${appTrace}`, evaluatorId, 'Helpfulness'], ['thumbs', null, null]]
    assert.deepEqual(names((await call('GET', '/api/scores')).json().scores), expected)
    assert.deepEqual(names((await call('GET', `/api/traces/${appTrace}`)).json().scores), expected)
    assert.deepEqual(names((await call('GET', '/api/traces?from=2026-01-01T00:00:00Z&order=asc')).json().traces[0].scores), expected)
  })

  it('leaves Tracewell’s own traces out of the trace list and sessions unless asked', async () => {
    const list = async (query: string) => (await call('GET', `/api/traces?from=2026-01-01T00:00:00Z&sort=time&order=asc${query}`)).json().traces.map((trace: { traceId: string }) => trace.traceId)
    assert.deepEqual(await list(''), [appTrace, emptyTrace])
    assert.deepEqual(await list('&include_tracewell_calls=true'), [appTrace, emptyTrace, ownTrace])
    assert.deepEqual(await list(`&service=${selfServiceName}`), [], 'even when filtered by its service, unless asked')
    assert.deepEqual(await list(`&service=${selfServiceName}&include_tracewell_calls=true`), [ownTrace])
    const bad = await call('GET', '/api/traces?include_tracewell_calls=maybe')
    assert.equal(bad.statusCode, 400)
    assert.match(bad.json().message, /include_tracewell_calls/)
    for (const query of ['', '?from=2026-01-01T00:00:00Z', '?include_tracewell_calls=true']) {
      const sessions = (await call('GET', `/api/sessions${query}`)).json().sessions
      assert.deepEqual(sessions.map((session: { sessionId: string; traceCount: number }) => [session.sessionId, session.traceCount]), [['sess-1', 2]], query)
    }
  })

  it('leaves Tracewell’s own calls out of usage, in totals and by every group, unless asked', async () => {
    const usage = async (query: string) => (await call('GET', `/api/usage?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z${query}`)).json()
    const figures = ({ traces, spans, inputTokens, outputTokens, costUsd }: Record<string, unknown>) => ({ traces, spans, inputTokens, outputTokens, costUsd })
    const app = { traces: 2, spans: 2, inputTokens: 100, outputTokens: 20, costUsd: 0.25 }
    const all = { traces: 3, spans: 4, inputTokens: 114, outputTokens: 26, costUsd: 1.25 }
    assert.deepEqual(figures((await usage('')).totals), app)
    assert.deepEqual(figures((await usage('&include_tracewell_calls=true')).totals), all)
    const groups = async (groupBy: string, include: boolean) =>
      (await usage(`&group_by=${groupBy}${include ? '&include_tracewell_calls=true' : ''}`)).series.map((row: Record<string, unknown>) => [row.group, row.traces, row.spans, row.inputTokens])
    assert.deepEqual(await groups('model', false), [[null, 1, 1, null], ['gpt-4o', 1, 1, 100]])
    assert.deepEqual(await groups('model', true), [[null, 1, 1, null], ['gpt-4o', 2, 2, 107], ['judge-model', 1, 1, 7]])
    assert.deepEqual(await groups('vendor', false), [[null, 1, 1, null], ['openai', 1, 1, 100]])
    assert.deepEqual(await groups('vendor', true), [[null, 1, 1, null], ['openai', 2, 3, 114]])
    assert.deepEqual(await groups('service', false), [['shop', 2, 2, 100]])
    assert.deepEqual(await groups('service', true), [['shop', 2, 2, 100], [selfServiceName, 1, 2, 14]])
    // Tracewell's calls have no user: the '' row held only them.
    assert.deepEqual(await groups('user', false), [['u1', 2, 2, 100]])
    assert.deepEqual(await groups('user', true), [[null, 1, 2, 14], ['u1', 2, 2, 100]])
  })
})
