import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { OpenAIInstrumentation } from '@traceloop/instrumentation-openai'
import OpenAI from 'openai'
import { storedTrace } from '../src/all-in-one.ts'
import { callJson } from '../src/api-client.ts'
import { fakeAnswer, fakeRefusal, fakeUsage } from '../src/fake-openai.server.ts'
import { startLlmStack, type LlmStack } from '../src/llm-stack.ts'
import { eventually } from '../src/processes.ts'

// Improving a prompt with evidence, as a user would: an application instrumented with OpenLLMetry
// calls the model (the local OpenAI-compatible server) and its traces reach `npm start`; two of
// them become a dataset; two versions of a prompt run over it as experiments, judged by an
// evaluator against the expected answers; the experiments are compared and the better version is
// promoted to production, which the SDKs' prompt lookup then serves.

interface Experiment {
  id: string
  status: string
  promptVersion: number
  traceFilter: string
  aggregates: { results: { completed: number; failed: number }; scores: Array<{ name: string; avg: number; count: number }>; inputTokens: number; costUsd: number | null }
  results: Array<{ datasetItemId: string; output: unknown; expectedOutput: unknown; traceId: string; scores: Array<{ name: string; value: number }> }>
}

describe('datasets and experiments, end to end', () => {
  let llm: LlmStack
  let client: OpenAI
  const api = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const response = await callJson<T>(`${llm.stack.service.url}${path}`, { method, headers: { 'x-api-key': llm.stack.projectKey }, ...(body === undefined ? {} : { body }) })
    return response
  }
  // Connections, evaluators and prompt experiments spend the project's provider key: the team key sets them up.
  const spend = async <T = Record<string, unknown>>(path: string, body: unknown) => {
    const { body: listed } = await callJson<{ projects: Array<{ id: string }> }>(`${llm.stack.service.url}/api/projects`, { headers: { 'x-api-key': llm.stack.teamKey } })
    return callJson<T>(`${llm.stack.service.url}${path}?project_id=${listed.projects[0]?.id}`, { method: 'POST', headers: { 'x-api-key': llm.stack.teamKey }, body })
  }
  const traceIds: string[] = []
  let datasetId: string
  let promptsetId: string
  let experiments: Experiment[]

  before(async () => {
    llm = await startLlmStack()
    const instrumentation = new OpenAIInstrumentation()
    instrumentation.setTracerProvider(llm.provider)
    instrumentation.manuallyInstrument(OpenAI)
    client = new OpenAI({ baseURL: llm.fake.baseURL, apiKey: 'sk-test' })
  })
  after(() => llm?.stop())

  it('builds a dataset from stored traces of an instrumented application', async () => {
    for (const question of ['How long do refunds take?', 'When will my refund arrive?']) {
      const traceId = await llm.turn(() => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] }))
      await storedTrace(llm.stack, traceId, 2)
      traceIds.push(traceId)
    }
    const dataset = await api<{ id: string }>('POST', '/api/datasets', { name: 'refund questions' })
    assert.equal(dataset.status, 201)
    datasetId = dataset.body.id
    const added = await api<{ version: number; items: Array<{ input: unknown; expectedOutput: unknown; sourceTraceId: string; sourceSpanId: string | null }> }>('POST', `/api/datasets/${datasetId}/items`, {
      items: traceIds.map((traceId) => ({ sourceTraceId: traceId })),
    })
    assert.equal(added.status, 201, JSON.stringify(added.body))
    // The application's own root span records no messages: the items are its LLM call's.
    assert.deepEqual(
      added.body.items.map((item) => [item.input, item.expectedOutput, item.sourceTraceId]),
      [
        [[{ role: 'user', content: 'How long do refunds take?' }], fakeAnswer, traceIds[0]],
        [[{ role: 'user', content: 'When will my refund arrive?' }], fakeAnswer, traceIds[1]],
      ],
    )
    assert.equal(added.body.version, 1)
  })

  it('runs two prompt versions over it with an evaluator, compares them, and promotes the better', async () => {
    const connection = await spend<{ id: string }>('/api/llm-connections', { name: 'local', provider: 'openai', baseUrl: llm.fake.baseURL, apiKey: 'sk-test-0123456789' })
    assert.equal(connection.status, 201, JSON.stringify(connection.body))
    assert.equal((await api('POST', '/api/score-configs', { name: 'matches', dataType: 'numeric', minValue: 0, maxValue: 1 })).status, 201)
    const evaluator = await spend<{ id: string }>('/api/evaluators', {
      name: 'matches expected', connectionId: connection.body.id, model: 'gpt-4o-mini', scoreName: 'matches', enabled: false,
      prompt: 'Question: {{input}}\nExpected: {{expected_output}}\nAnswer: {{output}}',
    })
    assert.equal(evaluator.status, 201, JSON.stringify(evaluator.body))
    promptsetId = (await api<{ id: string }>('POST', '/api/promptsets', { name: 'refund-answer' })).body.id
    for (const [system, live] of [['Be unhelpful.', true], ['Answer in one sentence.', false]] as const) {
      const value = JSON.stringify([{ role: 'system', content: system }, { role: 'user', content: '{{input}}' }])
      assert.equal((await api('POST', `/api/promptsets/${promptsetId}/prompts`, { value, model: 'gpt-4o-mini', live })).status, 201)
    }

    const started: string[] = []
    for (const version of [1, 2]) {
      const created = await spend<{ id: string; status: string }>('/api/experiments', { datasetId, promptsetId, version, connectionId: connection.body.id, evaluatorIds: [evaluator.body.id] })
      assert.deepEqual([created.status, created.body.status], [202, 'queued'], JSON.stringify(created.body))
      started.push(created.body.id)
    }
    experiments = await Promise.all(
      started.map((id) =>
        eventually(async () => {
          const { body } = await api<Experiment>('GET', `/api/experiments/${id}`)
          return body.status === 'completed' && body.aggregates.scores[0]?.count === 2 ? body : undefined
        }, 90_000, `experiment ${id} completed and judged`),
      ),
    )
    const [v1, v2] = experiments as [Experiment, Experiment]
    assert.deepEqual(v1.results.map((result) => [result.output, result.expectedOutput, result.scores.map((score) => score.value)]), [[fakeRefusal, fakeAnswer, [0]], [fakeRefusal, fakeAnswer, [0]]])
    assert.deepEqual(v2.results.map((result) => [result.output, result.scores.map((score) => score.value)]), [[fakeAnswer, [1]], [fakeAnswer, [1]]])
    assert.deepEqual([v1.aggregates.scores, v2.aggregates.scores], [[{ name: 'matches', avg: 0, count: 2 }], [{ name: 'matches', avg: 1, count: 2 }]])
    assert.equal(v2.aggregates.inputTokens, 2 * fakeUsage.prompt_tokens)
    assert.ok(v2.aggregates.costUsd !== null && v2.aggregates.costUsd > 0)
    // The model was sent each version's messages, the item's question in place of {{input}}.
    const sent = llm.fake.requests.map((request) => (request.messages as Array<{ content: string }> | undefined)?.map((message) => message.content).join(' | '))
    assert.ok(sent.includes('Answer in one sentence. | When will my refund arrive?'), sent.join('\n'))

    // Each result is a trace of the project, listed under the experiment's filter.
    const listed = await eventually(async () => {
      const { body } = await api<{ traces: Array<{ traceId: string }> }>('GET', `/api/traces?${v2.traceFilter}`)
      return body.traces.length === 2 ? body.traces : undefined
    }, 20_000, 'the experiment’s traces listed')
    assert.deepEqual(new Set(listed.map((trace) => trace.traceId)), new Set(v2.results.map((result) => result.traceId)))

    // Item by item, v2 beats v1 on every item: promote it.
    for (const [index, result] of v2.results.entries()) assert.ok((result.scores[0]?.value ?? 0) > (v1.results[index]?.scores[0]?.value ?? 0))
    const promoted = await api<{ previousVersion: number; label: { version: number } }>('PUT', `/api/promptsets/${promptsetId}/labels/production`, { version: v2.promptVersion })
    assert.deepEqual([promoted.status, promoted.body.previousVersion, promoted.body.label.version], [200, 1, 2])
    const served = await api<{ prompts: Array<{ version: number; live: boolean }> }>('GET', `/api/promptset?promptset_id=${promptsetId}`)
    assert.deepEqual(served.body.prompts.map((prompt) => [prompt.version, prompt.live]), [[2, true]])
  })
})
