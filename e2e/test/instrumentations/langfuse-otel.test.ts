import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { LangfuseSpanProcessor } from '@langfuse/otel'
import { propagateAttributes, setLangfuseTracerProvider, startActiveObservation, startObservation } from '@langfuse/tracing'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { listedTraces, startAllInOne, storedTrace, type AllInOne } from '../../src/all-in-one.ts'
import { callJson } from '../../src/api-client.ts'
import { startFakeOpenAi, type FakeOpenAi } from '../../src/fake-openai.server.ts'
import { judgePromptOf, judgeSettings } from '../../src/judge-expectations.ts'

// Langfuse's own OpenTelemetry SDK (@langfuse/otel's span processor with @langfuse/tracing's
// observations), pointed at Tracewell as it would be at Langfuse: base URL the server, the project
// key as its secret key (Basic auth; the public key is anything), so it posts to
// /api/public/otel/v1/traces. Its langfuse.* attributes (model, usage details, input and output,
// session and user, propagated to every span) become the same columns as every other client's,
// and the trace is found by what it said and by its model. A judge and a dataset item read the
// generation's messages, tool call and result included, and nothing of its session or user.

describe('Langfuse’s OpenTelemetry SDK (@langfuse/otel)', () => {
  let stack: AllInOne
  let fake: FakeOpenAi
  let processor: LangfuseSpanProcessor
  let provider: BasicTracerProvider

  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    ;[stack, fake] = await Promise.all([startAllInOne(judgeSettings), startFakeOpenAi()])
    processor = new LangfuseSpanProcessor({ publicKey: 'pk-lf-anything', secretKey: stack.projectKey, baseUrl: stack.service.url, exportMode: 'immediate' })
    provider = new BasicTracerProvider({ spanProcessors: [processor] })
    setLangfuseTracerProvider(provider)
  })
  after(async () => {
    await provider?.shutdown()
    await Promise.all([stack?.stop(), fake?.close()])
  })

  /** A support turn with one generation (gpt-4o-mini, fixed answer and usage), under the session and user; its trace id once exported. */
  async function sendTurn(ids: { sessionId: string; userId: string }, input: unknown[]): Promise<string> {
    const traceId = await propagateAttributes(ids, () =>
      startActiveObservation('support turn', async (turn) => {
        const output = { role: 'assistant', content: 'Wombats get refunds within thirty days.' }
        startObservation('chat', { model: 'gpt-4o-mini', input, output, usageDetails: { input: 1000, output: 100, total: 1100 } }, { asType: 'generation' }).end()
        return turn.traceId
      }),
    )
    await processor.forceFlush()
    return traceId
  }

  it('stores a generation with model, tokens, session, user and cost, found by its words and model', async () => {
    const traceId = await sendTurn({ sessionId: 'lf-session-1', userId: 'lf-user-1' }, [{ role: 'user', content: 'Can a wombat get a refund?' }])
    const spans = await storedTrace(stack, traceId, 2)
    const call = spans.find((span) => span.name === 'chat')
    assert.ok(call, JSON.stringify(spans.map((span) => span.name)))
    assert.deepEqual(
      [call.llmModel, call.inputTokens, call.outputTokens, call.totalTokens, call.sessionId, call.userId],
      ['gpt-4o-mini', 1000, 100, 1100, 'lf-session-1', 'lf-user-1'],
    )
    // gpt-4o-mini at $0.15 per million input and $0.60 per million output tokens.
    assert.equal(call.totalCostUsd, 0.00021)

    const found = async (filters: Record<string, string>) => (await listedTraces(stack, { ...filters, limit: '500' })).some((row) => row.traceId === traceId)
    for (const q of ['wombat', 'thirty']) assert.ok(await found({ q }), `q=${q} finds it`)
    assert.equal(await found({ q: 'pangolin' }), false)
    assert.ok(await found({ model: 'GPT-4o-mini' }), 'the model, in any case')
    assert.ok(await found({ session: 'lf-session-1' }), 'by its session')
    assert.ok(await found({ user: 'lf-user-1' }), 'by its user')
    assert.ok(await found({ max_cost: '0.00021' }))
    assert.equal(await found({ max_cost: '0.0001' }), false)
  })

  it('gives a judge and a dataset item the generation’s messages, its tool call and result, and no session or user', async () => {
    const toolCall = { id: 'call_wombat', type: 'function', function: { name: 'refund_policy', arguments: '{"animal":"wombat"}' } }
    const traceId = await sendTurn({ sessionId: 'lf-session-judge', userId: 'lf-user-judge' }, [
      { role: 'user', content: 'Can a wombat get a refund?' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_wombat', content: 'Refunds within thirty days, wombats included.' },
    ])
    const spans = await storedTrace(stack, traceId, 2)

    const prompt = await judgePromptOf(stack, fake, traceId, spans)
    assert.equal(
      prompt,
      [
        'Question: user: Can a wombat get a refund?',
        'assistant calls refund_policy({"animal":"wombat"})',
        'tool: Refunds within thirty days, wombats included.',
        'Answer: assistant: Wombats get refunds within thirty days.',
      ].join('\n'),
    )
    for (const id of ['lf-session-judge', 'lf-user-judge']) assert.ok(!prompt.includes(id), `the judge is not sent ${id}`)

    const dataset = await callJson<{ id: string }>(`${stack.service.url}/api/datasets`, { method: 'POST', headers: { 'x-api-key': stack.projectKey }, body: { name: 'wombats' } })
    assert.equal(dataset.status, 201, JSON.stringify(dataset.body))
    const call = spans.find((span) => span.name === 'chat')
    const added = await callJson<{ items: Array<{ input: unknown; expectedOutput: unknown }> }>(`${stack.service.url}/api/datasets/${dataset.body.id}/items`, {
      method: 'POST',
      headers: { 'x-api-key': stack.projectKey },
      body: { items: [{ sourceTraceId: traceId, sourceSpanId: call?.spanId }] },
    })
    assert.equal(added.status, 201, JSON.stringify(added.body))
    assert.deepEqual(added.body.items.map((item) => [item.input, item.expectedOutput]), [
      [
        [
          { role: 'user', content: 'Can a wombat get a refund?' },
          { role: 'assistant', content: '', toolCalls: [{ name: 'refund_policy', arguments: '{"animal":"wombat"}', id: 'call_wombat' }] },
          { role: 'tool', content: 'Refunds within thirty days, wombats included.' },
        ],
        'Wombats get refunds within thirty days.',
      ],
    ])
  })
})
