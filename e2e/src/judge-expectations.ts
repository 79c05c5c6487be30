import assert from 'node:assert/strict'
import type { AllInOne } from './all-in-one.ts'
import { callJson } from './api-client.ts'
import type { FakeOpenAi } from './fake-openai.server.ts'
import { eventually } from './processes.ts'

// An LLM-as-judge evaluator run over one trace of a real client, the judge being the local fake
// OpenAI server: what that server received is what a judge model would be sent. The stack must
// let the judge reach loopback (OUTBOUND_ALLOW_CIDRS=127.0.0.1/32) and poll often
// (judgeSettings).

/** Settings for `startAllInOne` so that its evaluator may call the local fake model, and soon. */
export const judgeSettings = { OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32', EVALUATOR_POLL_INTERVAL_MS: '250' } as const

/** The template every judge test uses: both sides, each on its own line. */
export const judgeTemplate = 'Question: {{input}}\nAnswer: {{output}}'

interface Judgment {
  status: string
  error: string | null
  skipReason?: string
}

/**
 * Runs an evaluator with `judgeTemplate` over the trace (a run over the millisecond its first
 * span started in, so that no other trace of the test is judged) and answers the user message the
 * fake model received for it, once the judgment completed.
 */
export async function judgePromptOf(stack: AllInOne, fake: FakeOpenAi, traceId: string, spans: ReadonlyArray<{ startTime: string }>): Promise<string> {
  const requestsBefore = fake.requests.length
  const { body: listed } = await callJson<{ projects: Array<{ id: string }> }>(`${stack.service.url}/api/projects`, { headers: { 'x-api-key': stack.teamKey } })
  // Connections and evaluators spend the project's provider key: the team key makes them.
  const spend = <T>(method: string, path: string, body?: unknown) =>
    callJson<T>(`${stack.service.url}${path}${path.includes('?') ? '&' : '?'}project_id=${listed.projects[0]?.id}`, { method, headers: { 'x-api-key': stack.teamKey }, ...(body === undefined ? {} : { body }) })
  const connection = await spend<{ id: string }>('POST', '/api/llm-connections', { name: `judge ${traceId}`, provider: 'openai', baseUrl: fake.baseURL, apiKey: 'sk-test-0123456789' })
  assert.equal(connection.status, 201, JSON.stringify(connection.body))
  const evaluator = await spend<{ id: string }>('POST', '/api/evaluators', {
    name: `judge ${traceId}`, connectionId: connection.body.id, model: 'gpt-4o-mini', scoreName: 'judged', enabled: false, prompt: judgeTemplate,
  })
  assert.equal(evaluator.status, 201, JSON.stringify(evaluator.body))
  const started = Math.min(...spans.map((span) => Date.parse(span.startTime)))
  const from = new Date(started).toISOString()
  const to = new Date(started + 1).toISOString()
  const run = await spend<{ id: string }>('POST', `/api/evaluators/${evaluator.body.id}/runs`, { from, to })
  assert.equal(run.status, 202, JSON.stringify(run.body))
  const judgments = await eventually(async () => {
    const { body } = await spend<{ judgments: Judgment[] }>('GET', `/api/evaluators/${evaluator.body.id}/judgments?run_id=${run.body.id}`)
    return body.judgments.length > 0 && body.judgments.every((judgment) => judgment.status !== 'pending') ? body.judgments : undefined
  }, 60_000, `the run of evaluator ${evaluator.body.id} over trace ${traceId} finished`)
  assert.deepEqual(judgments.map((judgment) => judgment.status), ['completed'], JSON.stringify(judgments))
  // The judge's requests are the ones asking for a JSON answer; the application's own are not.
  const prompts = fake.requests
    .slice(requestsBefore)
    .filter((request) => request.response_format !== undefined)
    .map((request) => (request.messages as Array<{ role: string; content: string }>).find((message) => message.role === 'user')?.content ?? '')
  assert.equal(prompts.length, 1, `one judge request: ${JSON.stringify(prompts)}`)
  return prompts[0] as string
}
