import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// The management side of LLM-as-judge (judging itself is tested end to end in apps/all-in-one and
// apps/evaluator): connections, evaluators, runs and their answers.

describe('LLM connections and evaluators', () => {
  let cp: TestControlPlane
  let unkeyed: TestControlPlane
  let ws: Workspace
  let other: Workspace
  // Setting up what spends takes a team key (or the console's session); reads take a project key too.
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, as: Workspace = ws, on = cp) =>
    on.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}project_id=${as.projectId}`, headers: { 'x-api-key': as.teamKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
  const withProjectKey = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, as: Workspace = ws) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': as.projectKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
  const connection = { name: 'openai', provider: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-proj-abcdefghijklmnop' }

  before(async () => {
    // Base URLs are resolved as they are saved; the tests need no DNS (api.openai.com at a public address).
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex') }, { outboundLookup: async () => [{ address: '162.159.140.245', family: 4 }] })
    unkeyed = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(async () => {
    await cp.close()
    await unkeyed.close()
  })

  it('refuses connections where no key can seal them: 503 naming the setting', async () => {
    const uws = await seedWorkspace(unkeyed.db)
    const response = await call('POST', '/api/llm-connections', connection, uws, unkeyed)
    assert.equal(response.statusCode, 503)
    assert.deepEqual(response.json(), { message: 'LLM connections need LLM_CONNECTION_ENCRYPTION_KEY set on the server, to keep their keys sealed' })
  })

  it('makes, lists and deletes connections per project; a used one stays', async () => {
    const created = await call('POST', '/api/llm-connections', connection)
    assert.equal(created.statusCode, 201)
    assert.equal(created.json().apiKeyHint, '…mnop')
    assert.ok(!created.body.includes('sk-proj'))
    assert.equal((await call('POST', '/api/llm-connections', connection)).statusCode, 409)
    // A project key reads its own project's.
    assert.equal((await withProjectKey('GET', '/api/llm-connections')).json().llmConnections.length, 1)
    assert.deepEqual((await withProjectKey('GET', '/api/llm-connections', undefined, other)).json(), { llmConnections: [] })
    const id = created.json().id as string
    const evaluator = await call('POST', '/api/evaluators', { name: 'e', connectionId: id, model: 'gpt-4o-mini', prompt: '{{output}}', scoreName: 'quality' })
    assert.equal(evaluator.statusCode, 201)
    const inUse = await call('DELETE', `/api/llm-connections/${id}`)
    assert.deepEqual([inUse.statusCode, inUse.json().message], [409, 'An evaluator uses this LLM connection: delete the evaluator first'])
    // Another project's evaluator may not name this project's connection.
    const foreign = await call('POST', '/api/evaluators', { name: 'e', connectionId: id, model: 'm', prompt: '{{output}}', scoreName: 'q' }, other)
    assert.deepEqual([foreign.statusCode, foreign.json().message], [400, `body/connectionId: no LLM connection "${id}" in this project`])
    assert.equal((await call('DELETE', `/api/evaluators/${evaluator.json().id}`)).statusCode, 204)
    assert.equal((await call('DELETE', `/api/llm-connections/${id}`, undefined, other)).statusCode, 404)
    assert.equal((await call('DELETE', `/api/llm-connections/${id}`)).statusCode, 204)
  })

  it('makes an evaluator from a promptset prompt by label, pauses it, and answers for its runs and judgments', async () => {
    const connectionId = (await call('POST', '/api/llm-connections', { ...connection, name: 'second' })).json().id as string
    const promptset = (await call('POST', '/api/promptsets', { name: 'judges' })).json().id as string
    assert.equal((await call('POST', `/api/promptsets/${promptset}/prompts`, { value: 'Rate {{ output }} for {{input}}', model: 'gpt-4o', live: true })).statusCode, 201)
    const created = await call('POST', '/api/evaluators', {
      name: 'from registry',
      connectionId,
      model: 'gpt-4o-mini',
      prompt: { name: 'judges' },
      scoreName: 'rating',
      filter: { model: 'gpt-4o', attr: ['env=prod'], score_name: 'user_feedback', max_score: 0 },
      samplingRate: 0.25,
    })
    assert.equal(created.statusCode, 201, created.body)
    const evaluator = created.json()
    assert.deepEqual(
      [evaluator.prompt, evaluator.promptRef, evaluator.filter, evaluator.samplingRate, evaluator.enabled, evaluator.judgments, evaluator.judge],
      [null, { name: 'judges', label: 'production' }, { model: 'gpt-4o', attr: ['env=prod'], score_name: 'user_feedback', max_score: 0 }, 0.25, true,
        { pending: 0, completed: 0, failed: 0, skipped: 0 }, { inputTokens: 0, outputTokens: 0, costUsd: null }],
    )
    assert.equal((await call('POST', '/api/evaluators', { name: 'from registry', connectionId, model: 'm', prompt: '{{input}}', scoreName: 'x' })).statusCode, 409)
    const badAttr = await call('POST', '/api/evaluators', { name: 'x', connectionId, model: 'm', prompt: '{{input}}', scoreName: 'x', filter: { attr: ['novalue'] } })
    assert.deepEqual([badAttr.statusCode, badAttr.json().message], [400, 'body/filter/attr/0: expected key=value, got "novalue"'])

    const paused = await call('PATCH', `/api/evaluators/${evaluator.id}`, { enabled: false })
    assert.deepEqual([paused.statusCode, paused.json().enabled], [200, false])
    assert.deepEqual((await call('GET', '/api/evaluators')).json().evaluators.map((e: { name: string; enabled: boolean }) => [e.name, e.enabled]), [['from registry', false]])
    assert.equal((await call('GET', `/api/evaluators/${evaluator.id}`, undefined, other)).statusCode, 404)

    const run = await call('POST', `/api/evaluators/${evaluator.id}/runs`, { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' })
    assert.equal(run.statusCode, 202)
    assert.deepEqual({ ...(run.json() as object), id: undefined, createdAt: undefined }, {
      id: undefined, createdAt: undefined, evaluatorId: evaluator.id, from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z', status: 'queued', traceCount: null,
      judgments: { pending: 0, completed: 0, failed: 0, skipped: 0 }, finishedAt: null,
    })
    assert.equal((await call('GET', `/api/evaluators/${evaluator.id}/runs`)).json().runs.length, 1)
    assert.equal((await call('GET', `/api/evaluators/${evaluator.id}/runs/${run.json().id}`)).json().status, 'queued')
    assert.equal((await call('GET', `/api/evaluators/${evaluator.id}/runs/nope`)).statusCode, 404)
    const badRange = await call('POST', `/api/evaluators/${evaluator.id}/runs`, { from: 'yesterday', to: '2026-01-02T00:00:00Z' })
    assert.deepEqual([badRange.statusCode, badRange.json().message], [400, 'body/from: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "yesterday"'])
    assert.deepEqual((await call('GET', `/api/evaluators/${evaluator.id}/judgments`)).json(), { judgments: [], nextCursor: null })
    assert.equal((await call('GET', `/api/evaluators/${evaluator.id}/judgments?cursor=x`)).json().message, 'querystring/cursor: not a nextCursor returned by this API')
    assert.deepEqual((await call('GET', `/api/evaluators/${evaluator.id}/judgments?from=2026-01-01T00:00:00Z&to=2099-01-01T00:00:00Z`)).json(), { judgments: [], nextCursor: null })
    const emptyWindow = await call('GET', `/api/evaluators/${evaluator.id}/judgments?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`)
    assert.deepEqual([emptyWindow.statusCode, emptyWindow.json().message], [400, 'querystring/from: must be before to (from is inclusive, to exclusive)'])
  })
})
