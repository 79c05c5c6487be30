import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { createTestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { buildAllInOneApp } from '../src/index.ts'
import { fakeModelsApiKey as apiKey, judgeUsage, modelUsage, startFakeModels, type FakeModels } from '@tracewell/test-support'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'

// Datasets and experiments end to end in `npm start`, both ways it runs (Postgres and Redis with
// BullMQ; embedded PGlite with the in-process queue): traces sent as an application sends them
// become dataset items, two prompt versions run over them as experiments through the evaluator
// worker against a fake OpenAI-compatible model, an evaluator judges each output against the
// item's expected output, the experiments compare item by item, and the better version is promoted.

const projectKey = `tw_proj_${randomBytes(24).toString('hex')}`
const teamKey = `tw_team_${randomBytes(24).toString('hex')}`
const randomHex = (bytes: number) => randomBytes(bytes).toString('hex')

/** One chat call as OpenLLMetry records it, as OTLP/JSON. */
function chatTrace(question: string, answer: string): { traceId: string; body: string } {
  const traceId = randomHex(16)
  const now = BigInt(Date.now()) * 1_000_000n
  const string = (key: string, value: string) => ({ key, value: { stringValue: value } })
  const span = {
    traceId, spanId: randomHex(8), name: 'openai.chat', kind: 3, startTimeUnixNano: String(now - 500_000_000n), endTimeUnixNano: String(now),
    attributes: [
      string('gen_ai.system', 'openai'), string('gen_ai.request.model', 'gpt-4o'),
      string('gen_ai.prompt.0.role', 'user'), string('gen_ai.prompt.0.content', question),
      string('gen_ai.completion.0.role', 'assistant'), string('gen_ai.completion.0.content', answer),
    ],
  }
  return { traceId, body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [string('service.name', 'geo-bot')] }, scopeSpans: [{ scope: { name: 't' }, spans: [span] }] }] }) }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
}

interface Result {
  datasetItemId: string
  status: string
  output: unknown
  error: string | null
  traceId: string | null
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number | null
  input: unknown
  expectedOutput: unknown
  scores: Array<{ name: string; value: number | null; source: string }>
}

for (const mode of ['Postgres and Redis', 'embedded PGlite and in-process queue'] as const) describe(`datasets and experiments, end to end (${mode})`, { timeout: 180_000 }, () => {
  let models: FakeModels
  let cleanUp: () => Promise<void>
  let app: App
  // Connections, evaluators and prompt experiments spend the project's provider key: the team key sets them up.
  const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => {
    const response = await app.inject({
      method,
      url: `${url}${url.includes('?') ? '&' : '?'}project_id=geo`,
      headers: { 'x-api-key': teamKey, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    })
    return { status: response.statusCode, body: response.body === '' ? null : response.json() }
  }
  const traces = [chatTrace('What is the capital of France?', 'Paris.'), chatTrace('What is the capital of Germany?', 'Berlin.')]
  let connectionId: string
  let evaluatorId: string
  let datasetId: string
  let promptsetId: string
  const experiments: Record<'v1' | 'v2', string> = { v1: '', v2: '' }

  before(async () => {
    models = await startFakeModels()
    let stores: Record<string, string>
    if (mode === 'Postgres and Redis') {
      const database = await createTestDatabase()
      cleanUp = () => database.drop()
      stores = { DATABASE_URL: database.url, REDIS_URL: loadConfig(TestEnvironmentSchema).REDIS_URL }
    } else {
      const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-experiments-'))
      cleanUp = async () => rmSync(dataDir, { recursive: true, force: true })
      stores = { DATA_DIR: dataDir }
    }
    const config = loadConfig(AllInOneConfigSchema, {
      ...stores,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'silent',
      GRPC_PORT: '0',
      INIT_TEAM_NAME: 'ops',
      INIT_TEAM_API_KEY: teamKey,
      INIT_PROJECT_NAME: 'geo',
      INIT_PROJECT_ID: 'geo',
      INIT_PROJECT_API_KEY: projectKey,
      LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      EVALUATOR_POLL_INTERVAL_MS: '200',
      EVALUATOR_BACKOFF_MS: '100',
      EVALUATOR_MAX_ATTEMPTS: '2',
      EXPERIMENT_CONCURRENCY: '2',
      // The fake models listen on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
    })
    ;({ app } = await buildAllInOneApp(config))
    for (const trace of traces) {
      const sent = await app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': projectKey, 'content-type': 'application/json' }, payload: trace.body })
      assert.equal(sent.statusCode, 200, sent.body)
    }
    connectionId = (await api('POST', '/api/llm-connections', { name: 'models', provider: 'openai', baseUrl: models.url, apiKey })).body.id
    assert.equal((await api('POST', '/api/score-configs', { name: 'correct', dataType: 'numeric', minValue: 0, maxValue: 1 })).status, 201)
    const evaluator = await api('POST', '/api/evaluators', {
      name: 'expected city',
      connectionId,
      model: 'gpt-4o-mini',
      prompt: 'Question: {{input}}\nExpected: {{expected_output}}\nAnswer: {{output}}',
      scoreName: 'correct',
      // Judges experiment outputs only: they name it; new traces are left alone.
      enabled: false,
    })
    assert.equal(evaluator.status, 201, JSON.stringify(evaluator.body))
    evaluatorId = evaluator.body.id
  })
  after(async () => {
    await app?.close()
    await cleanUp?.()
    models?.close()
  })

  it('builds a dataset from stored traces, and from items given by hand', async () => {
    datasetId = (await api('POST', '/api/datasets', { name: 'capitals' })).body.id
    // The traces reach the store (and the trace list) through the span queue.
    await waitFor('the traces to be listed', async () => ((await api('GET', '/api/traces?service=geo-bot')).body.traces.length === 2 ? true : undefined), 20_000)
    const fromTraces = await api('POST', `/api/datasets/${datasetId}/items`, { items: traces.map((trace) => ({ sourceTraceId: trace.traceId })) })
    assert.equal(fromTraces.status, 201, JSON.stringify(fromTraces.body))
    assert.deepEqual(
      fromTraces.body.items.map((item: { input: unknown; expectedOutput: unknown; sourceTraceId: string }) => [item.input, item.expectedOutput, item.sourceTraceId]),
      [
        [[{ role: 'user', content: 'What is the capital of France?' }], 'Paris.', traces[0]?.traceId],
        [[{ role: 'user', content: 'What is the capital of Germany?' }], 'Berlin.', traces[1]?.traceId],
      ],
    )
    const byHand = await api('POST', `/api/datasets/${datasetId}/items`, {
      items: ['Italy', 'Spain', 'Japan', 'Peru'].map((country, index) => ({ id: `hand-${index}`, input: `What is the capital of ${country}?`, expectedOutput: ['Rome', 'Madrid', 'Tokyo', 'Lima'][index] })),
    })
    assert.deepEqual([byHand.status, byHand.body.version], [201, 2])
  })

  it('runs two prompt versions over the dataset, each output judged, within the concurrency limit', async () => {
    const promptset = await api('POST', '/api/promptsets', { name: 'geo-answer' })
    promptsetId = promptset.body.id
    assert.equal((await api('POST', `/api/promptsets/${promptsetId}/prompts`, { value: 'Tell me: {{input}}', model: 'gpt-4o-mini', live: true })).status, 201)
    const chat = JSON.stringify([{ role: 'system', content: 'Reply with the city only.' }, { role: 'user', content: '{{input}}' }])
    assert.equal((await api('POST', `/api/promptsets/${promptsetId}/prompts`, { value: chat, model: 'gpt-4o-mini', modelSettings: { temperature: 0.2 } })).status, 201)
    assert.equal((await api('PUT', `/api/promptsets/${promptsetId}/labels/staging`, { version: 2 })).status, 200)

    const v1 = await api('POST', '/api/experiments', { datasetId, promptsetId, version: 1, connectionId, evaluatorIds: [evaluatorId] })
    assert.equal(v1.status, 202, JSON.stringify(v1.body))
    assert.deepEqual([v1.body.kind, v1.body.status, v1.body.datasetVersion, v1.body.itemCount, v1.body.name, v1.body.model], ['prompt', 'queued', 2, 6, 'geo-answer v1 · gpt-4o-mini', 'gpt-4o-mini'])
    const v2 = await api('POST', '/api/experiments', { datasetId, promptsetId, label: 'staging', connectionId, evaluatorIds: [evaluatorId], modelSettings: { max_tokens: 50 } })
    assert.equal(v2.status, 202, JSON.stringify(v2.body))
    assert.equal(v2.body.promptVersion, 2)
    experiments.v1 = v1.body.id
    experiments.v2 = v2.body.id

    const done = async (id: string) => {
      const { body } = await api('GET', `/api/experiments/${id}`)
      return body.status === 'completed' && body.aggregates.scores[0]?.count === 6 ? body : undefined
    }
    const [first, second] = await Promise.all([waitFor('v1 to complete and be judged', () => done(experiments.v1), 60_000), waitFor('v2 to complete and be judged', () => done(experiments.v2), 60_000)])
    assert.ok(models.maxInFlight <= 2, `at most EXPERIMENT_CONCURRENCY calls at once, saw ${models.maxInFlight}`)

    const results1 = first.results as Result[]
    const results2 = second.results as Result[]
    assert.deepEqual(results1.map((result) => [result.status, result.output]), results1.map(() => ['completed', 'It is a large and famous city.']))
    assert.deepEqual(results2.map((result) => result.output), ['Paris.', 'Berlin.', 'Rome.', 'Madrid.', 'Tokyo.', 'Lima.'])
    assert.deepEqual(results2[0]?.input, [{ role: 'user', content: 'What is the capital of France?' }])
    for (const result of [...results1, ...results2]) {
      assert.deepEqual([result.inputTokens, result.outputTokens], [modelUsage.prompt_tokens, modelUsage.completion_tokens])
      assert.ok(result.latencyMs !== null && result.latencyMs >= 50, String(result.latencyMs))
      assert.ok(result.costUsd !== null && result.costUsd > 0, String(result.costUsd))
      assert.match(result.traceId ?? '', /^[0-9a-f]{32}$/)
    }
    assert.deepEqual(results1.map((result) => result.scores.map((score) => [score.name, score.value, score.source])), results1.map(() => [['correct', 0, 'eval']]))
    assert.deepEqual(results2.map((result) => result.scores.map((score) => [score.name, score.value, score.source])), results2.map(() => [['correct', 1, 'eval']]))
    assert.deepEqual([first.aggregates.scores, second.aggregates.scores], [[{ name: 'correct', avg: 0, count: 6 }], [{ name: 'correct', avg: 1, count: 6 }]])
    assert.deepEqual(first.aggregates.results, { total: 6, pending: 0, completed: 6, failed: 0 })
    assert.deepEqual([first.aggregates.inputTokens, first.aggregates.outputTokens], [6 * modelUsage.prompt_tokens, 6 * modelUsage.completion_tokens])
    assert.ok(Math.abs(first.aggregates.costUsd - results1.reduce((sum, result) => sum + (result.costUsd ?? 0), 0)) < 1e-12)

    // What the model was sent: v1's text prompt filled with the item's question; v2's chat messages and merged settings.
    const sentV1 = models.requests.find((request) => request.body.messages[0]?.content === 'Tell me: What is the capital of Spain?')
    assert.ok(sentV1, 'v1 sent its filled text prompt')
    const sentV2 = models.requests.find((request) => request.body.messages[1]?.content === 'What is the capital of Spain?' && request.body.messages[0]?.role === 'system')
    assert.deepEqual([sentV2?.body.model, sentV2?.body.temperature, sentV2?.body.max_tokens], ['gpt-4o-mini', 0.2, 50])
    // The judge saw the expected output.
    assert.ok(models.requests.some((request) => request.body.response_format !== undefined && request.body.messages[1]?.content.includes('Expected: Madrid\nAnswer: Madrid.')))
    const judgments = (await api('GET', `/api/evaluators/${evaluatorId}`)).body
    assert.deepEqual([judgments.judgments.completed, judgments.judge.inputTokens], [12, 12 * judgeUsage.prompt_tokens])
  })

  it('keeps each result’s own trace, tagged with the experiment, in the trace list when Tracewell’s calls are asked for', async () => {
    const { body: experiment } = await api('GET', `/api/experiments/${experiments.v2}`)
    assert.equal(experiment.traceFilter, `attr=tracewell.experiment.id=${experiments.v2}&include_tracewell_calls=true`)
    const listed = await waitFor('the experiment’s traces to be listed', async () => {
      const { body } = await api('GET', `/api/traces?${experiment.traceFilter}&limit=50`)
      return body.traces.length === 6 ? body.traces : undefined
    }, 20_000)
    assert.deepEqual(new Set(listed.map((trace: { traceId: string }) => trace.traceId)), new Set(experiment.results.map((result: Result) => result.traceId)))
    const byDefault = (await api('GET', `/api/traces?attr=tracewell.experiment.id=${experiments.v2}&limit=50`)).body
    assert.deepEqual(byDefault.traces, [], 'left out of the list by default')
    const trace = (await api('GET', `/api/traces/${experiment.results[0].traceId}`)).body
    const [span] = trace.spans
    assert.equal(span.serviceName, 'tracewell')
    assert.equal(span.attributes['tracewell.origin'].stringValue, 'experiment')
    assert.equal(span.attributes['tracewell.experiment.id'].stringValue, experiments.v2)
    assert.equal(span.attributes['tracewell.dataset.item.expected_output'].stringValue, 'Paris.')
    assert.deepEqual(JSON.parse(span.attributes['gen_ai.output.messages'].stringValue), [{ role: 'assistant', parts: [{ type: 'text', content: 'Paris.' }], finish_reason: 'stop' }])
    assert.deepEqual([span.inputTokens, span.outputTokens, span.llmResponseModel], [42, 8, 'gpt-4o-mini-2024-07-18'])
    assert.ok(span.totalCostUsd > 0)
  })

  it('compares the two experiments item by item, and promotes the better version to production', async () => {
    const { body } = await api('GET', `/api/experiments?dataset_id=${datasetId}`)
    assert.deepEqual(body.experiments.map((experiment: { id: string }) => experiment.id), [experiments.v2, experiments.v1])
    const [better] = body.experiments.toSorted((a: { aggregates: { scores: Array<{ avg: number }> } }, b: typeof a) => (b.aggregates.scores[0]?.avg ?? 0) - (a.aggregates.scores[0]?.avg ?? 0))
    assert.equal(better.promptVersion, 2)
    const promoted = await api('PUT', `/api/promptsets/${promptsetId}/labels/production`, { version: better.promptVersion })
    assert.deepEqual([promoted.status, promoted.body.previousVersion, promoted.body.label.version], [200, 1, 2])
    const served = await app.inject({ url: `/api/promptset?promptset_id=${promptsetId}`, headers: { 'x-api-key': projectKey } })
    assert.deepEqual(served.json().prompts.map((prompt: { version: number }) => prompt.version), [2])
  })

  it('records a failed call with its error and trace, not retried when no retry can help', async () => {
    const bad = (await api('POST', '/api/llm-connections', { name: 'bad key', provider: 'openai', baseUrl: models.url, apiKey: 'sk-wrong-key-0000' })).body.id
    const failed = await api('POST', '/api/experiments', { datasetId, datasetVersion: 1, promptsetId, version: 2, connectionId: bad, name: 'with a bad key' })
    assert.equal(failed.status, 202)
    const body = await waitFor('the failed experiment to complete', async () => {
      const { body: experiment } = await api('GET', `/api/experiments/${failed.body.id}`)
      return experiment.status === 'completed' ? experiment : undefined
    }, 30_000)
    assert.deepEqual(body.aggregates.results, { total: 2, pending: 0, completed: 0, failed: 2 })
    for (const result of body.results as Array<Result & { attempts: number }>) {
      assert.equal(result.attempts, 1)
      assert.equal(result.error, 'the model answered 401 (the API key was refused)')
      const trace = (await api('GET', `/api/traces/${result.traceId}`)).body
      assert.equal(trace.spans[0].status.code, 2)
    }
  })

  it('refuses an experiment that could not run, naming why', async () => {
    const base = { datasetId, promptsetId, version: 1, connectionId }
    const cases: Array<[unknown, string]> = [
      [{ ...base, datasetId: 'nope' }, 'body/datasetId: no dataset "nope" in this project'],
      [{ ...base, datasetVersion: 9 }, 'body/datasetVersion: the dataset is at version 2'],
      [{ ...base, promptsetId: 'nope' }, 'body/promptsetId: no prompt registry "nope" in this project'],
      [{ ...base, version: 7 }, 'body/version: the registry has no version 7'],
      [{ ...base, version: undefined, label: 'canary' }, 'body/label: no version of the registry is labelled "canary"'],
      [{ ...base, label: 'staging' }, 'body: pass either version or label, not both'],
      [{ ...base, connectionId: undefined }, 'body/connectionId: required with promptsetId'],
      [{ ...base, connectionId: 'nope' }, 'body/connectionId: no LLM connection "nope" in this project'],
      [{ ...base, evaluatorIds: [evaluatorId, 'nope'] }, 'body/evaluatorIds/1: no evaluator "nope" in this project'],
      [{ datasetId, model: 'x' }, 'body/model: only with promptsetId (an SDK experiment runs your own code)'],
      [{ ...base, colour: 'red' }, 'body: must NOT have additional properties'],
    ]
    for (const [payload, message] of cases) {
      const response = await api('POST', '/api/experiments', payload)
      assert.deepEqual([response.status, response.body.message], [400, message], JSON.stringify(payload))
    }
    const empty = (await api('POST', '/api/datasets', { name: 'empty' })).body.id
    const none = await api('POST', '/api/experiments', { ...base, datasetId: empty })
    assert.deepEqual([none.status, none.body.message], [400, 'body/datasetId: the dataset has no items in version 0'])
  })

  it('takes an SDK experiment’s results: the caller’s traces linked to items, figures from the traces', async () => {
    const created = await api('POST', '/api/experiments', { datasetId, name: 'my pipeline', metadata: { commit: 'abc123' } })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.deepEqual([created.body.kind, created.body.status, created.body.itemCount], ['sdk', 'external', 6])
    const items = (await api('GET', `/api/datasets/${datasetId}`)).body.items as Array<{ id: string; sourceTraceId: string | null }>
    const fromTrace = items.find((item) => item.sourceTraceId === traces[0]?.traceId)
    assert.ok(fromTrace)
    const posted = await api('POST', `/api/experiments/${created.body.id}/results`, { results: [{ datasetItemId: fromTrace.id, traceId: traces[0]?.traceId, output: 'Paris.' }] })
    assert.equal(posted.status, 201, JSON.stringify(posted.body))
    assert.equal((await api('POST', '/api/scores', { traceId: traces[0]?.traceId, name: 'correct', value: 1 })).status, 201)
    const { body } = await api('GET', `/api/experiments/${created.body.id}`)
    const [result] = body.results as Result[]
    // The trace's duration (500 ms) and model, as its summary has them; no tokens recorded on it.
    assert.deepEqual([body.results.length, result?.output, result?.latencyMs, result?.scores.map((score) => score.value)], [1, 'Paris.', 500, [1]])
    assert.deepEqual(body.aggregates.scores, [{ name: 'correct', avg: 1, count: 1 }])
    const unknown = await api('POST', `/api/experiments/${created.body.id}/results`, { results: [{ datasetItemId: 'nope', traceId: traces[0]?.traceId }] })
    assert.deepEqual([unknown.status, unknown.body.message], [400, 'body/results/0/datasetItemId: no item "nope" in version 2 of the dataset'])
    const toPrompt = await api('POST', `/api/experiments/${experiments.v1}/results`, { results: [{ datasetItemId: fromTrace.id, traceId: traces[0]?.traceId }] })
    assert.equal(toPrompt.status, 409)
  })

  it('deletes an experiment with its results, the traces and scores kept', async () => {
    const { body: before } = await api('GET', `/api/experiments/${experiments.v1}`)
    assert.equal((await api('DELETE', `/api/experiments/${experiments.v1}`)).status, 204)
    assert.equal((await api('GET', `/api/experiments/${experiments.v1}`)).status, 404)
    assert.deepEqual((await api('DELETE', `/api/experiments/${experiments.v1}`)).body, { message: 'Experiment not found' })
    const traceId = (before.results as Result[])[0]?.traceId
    assert.equal((await api('GET', `/api/traces/${traceId}`)).status, 200)
    assert.equal((await api('GET', `/api/scores?trace_id=${traceId}`)).body.scores.length, 1)
    assert.deepEqual((await api('GET', `/api/experiments?dataset_id=${datasetId}`)).body.experiments.map((experiment: { id: string }) => experiment.id).includes(experiments.v1), false)
  })
})
