import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { OpenAIInstrumentation } from '@traceloop/instrumentation-openai'
import OpenAI from 'openai'
import { listedTraces, startAllInOne, storedTrace, type AllInOne } from '../../src/all-in-one.ts'
import { startFakeOpenAi, type FakeOpenAi } from '../../src/fake-openai.server.ts'
import { assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { otlpTracerProvider } from '../../src/otel-clients.ts'

// OpenLLMetry (@traceloop/instrumentation-openai) around the real `openai` client, exporting with
// the OpenTelemetry protobuf exporter. It sends the current GenAI names (gen_ai.provider.name,
// gen_ai.request.model, gen_ai.usage.*). Without Traceloop's own SDK (whose span processor adds
// association properties) an application names the conversation and the user on its own span,
// with the GenAI and OpenTelemetry names (gen_ai.conversation.id, user.id): the trace carries them.

describe('OpenLLMetry instrumentation of the openai client', () => {
  let stack: AllInOne
  let fake: FakeOpenAi
  let provider: BasicTracerProvider
  let client: OpenAI

  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    ;[stack, fake] = await Promise.all([startAllInOne(), startFakeOpenAi()])
    provider = otlpTracerProvider({ url: `${stack.service.url}/v1/traces`, apiKey: stack.projectKey, encoding: 'protobuf', serviceName: 'support-bot' })
    // enrichTokens: this instrumentation (0.27) does not read a stream's usage chunk; with it, it
    // counts a stream's tokens itself (tiktoken), the documented way to have them.
    const instrumentation = new OpenAIInstrumentation({ enrichTokens: true })
    instrumentation.setTracerProvider(provider)
    instrumentation.manuallyInstrument(OpenAI)
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' })
  })
  after(async () => {
    await provider?.shutdown()
    await Promise.all([stack?.stop(), fake?.close()])
  })

  for (const streamed of [false, true]) {
    it(`stores a ${streamed ? 'streamed' : 'plain'} chat completion with model, vendor, tokens and cost, and the trace its session and user`, async () => {
      const sessionId = `ollm-session-${streamed}`
      const userId = `ollm-user-${streamed}`
      const tracer = provider.getTracer('support-bot')
      const traceId = await tracer.startActiveSpan('answer question', { attributes: { 'gen_ai.conversation.id': sessionId, 'user.id': userId } }, async (turn) => {
        const messages = [{ role: 'user' as const, content: 'How long do refunds take?' }]
        if (!streamed) await client.chat.completions.create({ model: 'gpt-4o-mini', messages })
        else for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } })) void chunk
        turn.end()
        return turn.spanContext().traceId
      })
      await provider.forceFlush()
      const spans = await storedTrace(stack, traceId, 2)
      const llm = spans.find((span) => span.parentSpanId !== null)
      if (!streamed) assertPricedOpenAiChat(llm, 'OpenLLMetry', { responseModel: 'gpt-4o-mini-2024-07-18' })
      else {
        // Counted by the instrumentation, not reported by the server: priced all the same.
        const { inputTokens, outputTokens, totalTokens } = llm ?? {}
        assert.ok(inputTokens && outputTokens && totalTokens === inputTokens + outputTokens, `counted tokens: ${inputTokens} + ${outputTokens} = ${totalTokens}`)
        assert.deepEqual([llm?.llmVendor, llm?.llmModel, llm?.llmResponseModel, llm?.costSource], ['openai', 'gpt-4o-mini', 'gpt-4o-mini-2024-07-18', 'price_table'])
        assert.ok(Math.abs((llm?.totalCostUsd ?? 0) - (inputTokens * 0.15 + outputTokens * 0.6) / 1e6) < 1e-12, `cost ${llm?.totalCostUsd}`)
      }
      const [row] = await listedTraces(stack, { session: sessionId })
      assert.deepEqual([row?.traceId, row?.sessionId, row?.userId, row?.models, row?.totalTokens], [traceId, sessionId, userId, ['gpt-4o-mini'], llm?.totalTokens])
      assert.equal(row?.costUsd, llm?.totalCostUsd, 'the trace costs what its one call cost')
    })
  }
})
