import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { findTraceSpans } from '@tracewell/db'
import { fakeModelsApiKey, modelUsage, startFakeModels, type FakeModels } from '@tracewell/test-support'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// The playground over inject(): a prompt version or hand-written messages, variables filled, run
// against a fake OpenAI-compatible model, whole or streamed; each run a trace of the project.

describe('the playground', { timeout: 120_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let models: FakeModels
  let connectionId: string
  let promptsetId: string
  // The playground spends the project's connection: a team key (or the console's session) runs it.
  const post = (url: string, payload: unknown) =>
    cp.app.inject({ method: 'POST', url: `${url}?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey, 'content-type': 'application/json' }, payload: JSON.stringify(payload) })

  before(async () => {
    models = await startFakeModels(20)
    // The fake models listen on loopback, which the outbound policy refuses unless allowed.
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'), OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' })
    ws = await seedWorkspace(cp.db, 'Acme')
    connectionId = (await post('/api/llm-connections', { name: 'models', provider: 'openai', baseUrl: models.url, apiKey: fakeModelsApiKey })).json().id
    promptsetId = (await post('/api/promptsets', { name: 'geo' })).json().id
    const chat = JSON.stringify([{ role: 'system', content: 'Reply with the city only.' }, { role: 'user', content: 'Capital of {{country}}?' }])
    assert.equal((await post(`/api/promptsets/${promptsetId}/prompts`, { value: chat, model: 'gpt-4o-mini', modelSettings: { temperature: 0.3 }, live: true })).statusCode, 201)
  })
  after(async () => {
    await cp?.close()
    models?.close()
  })

  it('runs the production version with its variables filled, and records the run as a trace', async () => {
    const response = await post('/api/playground/runs', { connectionId, promptsetId, variables: { country: 'France' }, modelSettings: { max_tokens: 20 } })
    assert.equal(response.statusCode, 200, response.body)
    const run = response.json()
    assert.deepEqual({ ...run, traceId: undefined, latencyMs: undefined, costUsd: undefined }, {
      traceId: undefined, latencyMs: undefined, costUsd: undefined,
      messages: [{ role: 'system', content: 'Reply with the city only.' }, { role: 'user', content: 'Capital of France?' }],
      output: 'Paris.', toolCalls: [], error: null, model: 'gpt-4o-mini-2024-07-18', inputTokens: modelUsage.prompt_tokens, outputTokens: modelUsage.completion_tokens, firstTokenMs: null,
    })
    assert.ok(run.latencyMs >= 20 && run.costUsd > 0, JSON.stringify(run))
    const sent = models.requests.at(-1)?.body
    assert.deepEqual([sent?.model, sent?.temperature, sent?.max_tokens, sent?.stream], ['gpt-4o-mini', 0.3, 20, false])
    const [span] = await findTraceSpans(cp.db, ws.projectId, run.traceId)
    assert.deepEqual([span?.name, span?.serviceName, span?.attributes['tracewell.origin'], span?.attributes['tracewell.playground'], span?.attributes['tracewell.prompt.version'], span?.outputTokens], [
      'playground', 'tracewell', { stringValue: 'playground' }, { stringValue: 'true' }, { intValue: '1' }, modelUsage.completion_tokens,
    ])
  })

  it('streams hand-written messages as server-sent events, the run last', async () => {
    const response = await post('/api/playground/runs', {
      connectionId, model: 'gpt-4o-mini', stream: true,
      messages: [{ role: 'system', content: 'Reply with the city only.' }, { role: 'user', content: 'Capital of {{ country }}?' }],
      variables: { country: 'Japan' },
    })
    assert.equal(response.statusCode, 200)
    assert.match(response.headers['content-type'] as string, /^text\/event-stream/)
    const events = response.body.split('\n\n').filter((chunk) => chunk.startsWith('data: ')).map((chunk) => JSON.parse(chunk.slice(6)))
    assert.deepEqual(events.filter((event) => event.type === 'text').map((event) => event.text).join(''), 'Tokyo.')
    const done = events.at(-1)
    assert.deepEqual([done.type, done.output, done.inputTokens, done.messages[1].content], ['done', 'Tokyo.', modelUsage.prompt_tokens, 'Capital of Japan?'])
    assert.ok(typeof done.firstTokenMs === 'number')
    assert.equal(models.requests.at(-1)?.body.stream, true)
    assert.equal((await findTraceSpans(cp.db, ws.projectId, done.traceId)).length, 1)
  })

  it('answers whole where the endpoint does not stream', async () => {
    const response = await post('/api/playground/runs', { connectionId, model: 'no-streaming', stream: true, messages: [{ role: 'system', content: 'Reply with the city only.' }, { role: 'user', content: 'Capital of Italy?' }] })
    const events = response.body.split('\n\n').filter((chunk) => chunk.startsWith('data: ')).map((chunk) => JSON.parse(chunk.slice(6)))
    assert.deepEqual(events.map((event) => [event.type, event.type === 'text' ? event.text : event.output]), [['text', 'Rome.'], ['done', 'Rome.']])
    assert.deepEqual(models.requests.slice(-2).map((request) => request.body.stream), [true, false])
  })

  it('answers a model’s refusal as a run with its error, and refuses a run that could not start', async () => {
    const bad = (await post('/api/llm-connections', { name: 'bad', provider: 'openai', baseUrl: models.url, apiKey: 'sk-wrong-0000' })).json().id
    const refused = await post('/api/playground/runs', { connectionId: bad, promptsetId, variables: { country: 'Peru' } })
    assert.equal(refused.statusCode, 200)
    // The endpoint's own error body ("Incorrect API key provided") is not passed on.
    assert.equal(refused.json().error, 'the model answered 401 (the API key was refused)')
    const [span] = await findTraceSpans(cp.db, ws.projectId, refused.json().traceId)
    assert.equal(span?.status.code, 2)
    const cases: Array<[unknown, string]> = [
      [{ connectionId, promptsetId }, 'body/variables: missing country'],
      [{ connectionId, messages: [{ role: 'user', content: 'hi' }] }, 'body/model: required with messages'],
      [{ connectionId, model: 'm', messages: [{ role: 'user', content: '{{a}} {{b}}' }], variables: { a: 'x' } }, 'body/variables: missing b'],
      [{ connectionId, promptsetId, version: 4 }, 'body/version: the registry has no version 4'],
      [{ connectionId: 'nope', promptsetId }, 'body/connectionId: no LLM connection "nope" in this project'],
      [{ connectionId }, 'body: needs messages, or a promptsetId and version or label'],
      [{ connectionId, model: 'm', messages: [{ role: 'wizard', content: 'x' }] }, 'body/messages/0/role: must be equal to constant'],
    ]
    for (const [payload, message] of cases) {
      const response = await post('/api/playground/runs', payload)
      assert.deepEqual([response.statusCode, response.json().message], [400, message], JSON.stringify(payload))
    }
  })
})
