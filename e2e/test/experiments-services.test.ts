import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { callJson } from '../src/api-client.ts'
import { fakeAnswer, startFakeOpenAi, type FakeOpenAi } from '../src/fake-openai.server.ts'
import { eventually, startAll, startService, type RunningService } from '../src/processes.ts'

// Experiments and the playground with the services as separate processes over Postgres and Redis:
// the control plane writes the experiment, the evaluator process runs its items on the
// experiment-items queue in Redis and judges the outputs, the writer folds the traces both of them
// store into the trace list.

const adminKey = `admin-${randomUUID()}-${randomUUID()}`
const hex = (bytes: number) => randomBytes(bytes).toString('hex')

describe('experiments and the playground across separate services', () => {
  let database: TestDatabase
  let services: RunningService[]
  let ingest: RunningService
  let controlPlane: RunningService
  let fake: FakeOpenAi
  let teamKey: string
  let projectId: string
  // Connections, evaluators and prompt experiments spend the project's provider key: the team key sets them up.
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    callJson<T>(`${controlPlane.url}${path}${path.includes('?') ? '&' : '?'}project_id=${projectId}`, { method, headers: { 'x-api-key': teamKey }, ...(body === undefined ? {} : { body }) })
  let projectKey: string

  before(async () => {
    database = await createTestDatabase()
    fake = await startFakeOpenAi()
    const { REDIS_URL } = testEnvironment()
    const shared = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: testQueuePrefix('e2e') }
    // The fake model listens on loopback, which the outbound policy refuses unless allowed.
    const sealing = { LLM_CONNECTION_ENCRYPTION_KEY: hex(32), OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' }
    services = await startAll([
      () => startService('ingest', 'apps/ingest/src/server.ts', shared),
      () => startService('writer', 'apps/writer/src/server.ts', shared),
      () => startService('control-plane', 'apps/control-plane/src/server.ts', { ...shared, ...sealing, ADMIN_API_KEY: adminKey }),
      () => startService('evaluator', 'apps/evaluator/src/server.ts', { ...shared, ...sealing, EVALUATOR_POLL_INTERVAL_MS: '250' }),
    ] as const)
    ;[ingest, , controlPlane] = services as [RunningService, RunningService, RunningService, RunningService]
    const team = await callJson<{ apiKey: string }>(`${controlPlane.url}/api/teams`, { method: 'POST', headers: { 'x-admin-key': adminKey }, body: { name: 'e2e team' } })
    const project = await callJson<{ id: string }>(`${controlPlane.url}/api/projects`, { method: 'POST', headers: { 'x-api-key': team.body.apiKey }, body: { name: 'e2e project' } })
    projectKey = (await callJson<{ apiKey: string }>(`${controlPlane.url}/api/api-key?project_id=${project.body.id}`, { method: 'POST', headers: { 'x-api-key': team.body.apiKey } })).body.apiKey
    teamKey = team.body.apiKey
    projectId = project.body.id
  })
  after(async () => {
    await Promise.all((services ?? []).map((service) => service.stop()))
    await fake?.close()
    await database?.drop()
  })

  it('runs an experiment in the evaluator process, judged, its traces in the trace list', async () => {
    const traceId = hex(16)
    const now = BigInt(Date.now()) * 1_000_000n
    const string = (key: string, value: string) => ({ key, value: { stringValue: value } })
    const span = {
      traceId, spanId: hex(8), name: 'openai.chat', kind: 3, startTimeUnixNano: String(now - 300_000_000n), endTimeUnixNano: String(now),
      attributes: [string('gen_ai.prompt.0.role', 'user'), string('gen_ai.prompt.0.content', 'How long do refunds take?'), string('gen_ai.completion.0.role', 'assistant'), string('gen_ai.completion.0.content', fakeAnswer)],
    }
    const sent = await fetch(`${ingest.url}/v1/traces`, { method: 'POST', headers: { 'x-api-key': projectKey, 'content-type': 'application/json' }, body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'e2e' }, spans: [span] }] }] }) })
    assert.equal(sent.status, 200)
    await eventually(async () => ((await api('GET', `/api/traces/${traceId}`)).status === 200 ? true : undefined), 20_000, 'the trace stored')

    const dataset = await api<{ id: string }>('POST', '/api/datasets', { name: 'refunds' })
    assert.equal((await api('POST', `/api/datasets/${dataset.body.id}/items`, { sourceTraceId: traceId })).status, 201)
    const connection = await api<{ id: string }>('POST', '/api/llm-connections', { name: 'local', provider: 'openai', baseUrl: fake.baseURL, apiKey: 'sk-test-0123456789' })
    assert.equal(connection.status, 201, JSON.stringify(connection.body))
    const evaluator = await api<{ id: string }>('POST', '/api/evaluators', {
      name: 'matches', connectionId: connection.body.id, model: 'gpt-4o-mini', scoreName: 'matches', enabled: false, prompt: 'Expected: {{expected_output}}\nAnswer: {{output}}',
    })
    const registry = await api<{ id: string }>('POST', '/api/promptsets', { name: 'refund-answer' })
    await api('POST', `/api/promptsets/${registry.body.id}/prompts`, { value: 'Answer the customer: {{input}}', model: 'gpt-4o-mini', live: true })
    const started = await api<{ id: string; traceFilter: string }>('POST', '/api/experiments', { datasetId: dataset.body.id, promptsetId: registry.body.id, connectionId: connection.body.id, evaluatorIds: [evaluator.body.id] })
    assert.equal(started.status, 202, JSON.stringify(started.body))

    const done = await eventually(async () => {
      const { body } = await api<{ status: string; aggregates: { scores: Array<{ avg: number; count: number }> }; results: Array<{ output: unknown; traceId: string }> }>('GET', `/api/experiments/${started.body.id}`)
      return body.status === 'completed' && body.aggregates.scores[0]?.count === 1 ? body : undefined
    }, 60_000, 'the experiment completed and judged by the evaluator process')
    assert.deepEqual([done.results[0]?.output, done.aggregates.scores[0]?.avg], [fakeAnswer, 1])
    assert.ok(fake.requests.some((request) => JSON.stringify(request.messages).includes('Answer the customer: How long do refunds take?')))
    // Stored by the evaluator, folded into the list by the writer.
    await eventually(async () => {
      const { body } = await api<{ traces: Array<{ traceId: string }> }>('GET', `/api/traces?${started.body.traceFilter}`)
      return body.traces[0]?.traceId === done.results[0]?.traceId ? true : undefined
    }, 20_000, 'the experiment’s trace listed')
  })

  it('runs the playground from the control plane, streamed, the run a listed trace', async () => {
    const connection = (await api<{ llmConnections: Array<{ id: string }> }>('GET', '/api/llm-connections')).body.llmConnections[0]
    const response = await fetch(`${controlPlane.url}/api/playground/runs?project_id=${projectId}`, {
      method: 'POST',
      headers: { 'x-api-key': teamKey, 'content-type': 'application/json' },
      body: JSON.stringify({ connectionId: connection?.id, model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Refund time for {{product}}?' }], variables: { product: 'shoes' } }),
    })
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/)
    const events = (await response.text()).split('\n\n').filter((chunk) => chunk.startsWith('data: ')).map((chunk) => JSON.parse(chunk.slice(6)) as { type: string; text?: string; output?: string; traceId?: string })
    assert.ok(events.filter((event) => event.type === 'text').length > 1, 'streamed in pieces')
    const done = events.at(-1)
    assert.deepEqual([done?.type, done?.output], ['done', fakeAnswer])
    await eventually(async () => {
      const { body } = await api<{ traces: Array<{ traceId: string }> }>('GET', '/api/traces?attr=tracewell.playground=true&include_tracewell_calls=true')
      return body.traces.some((trace) => trace.traceId === done?.traceId) ? true : undefined
    }, 20_000, 'the playground run listed')
  })
})
