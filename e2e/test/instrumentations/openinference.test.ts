import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setSession, setUser } from '@arizeai/openinference-core'
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import OpenAI from 'openai'
import { startAllInOne, storedTrace, type AllInOne } from '../../src/all-in-one.ts'
import { startFakeOpenAi, type FakeOpenAi } from '../../src/fake-openai.server.ts'
import { assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { otlpTracerProvider } from '../../src/otel-clients.ts'

// OpenInference (@arizeai/openinference-instrumentation-openai) around the real `openai` client,
// exporting with the OpenTelemetry protobuf exporter: its `llm.*` names (llm.model_name,
// llm.provider, llm.token_count.*) and its session and user context (setSession, setUser, which
// it writes as session.id and user.id) must become the same columns as every other library's.

describe('OpenInference instrumentation of the openai client', () => {
  let stack: AllInOne
  let fake: FakeOpenAi
  let provider: BasicTracerProvider
  let client: OpenAI

  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    ;[stack, fake] = await Promise.all([startAllInOne(), startFakeOpenAi()])
    provider = otlpTracerProvider({ url: `${stack.service.url}/v1/traces`, apiKey: stack.projectKey, encoding: 'protobuf', serviceName: 'support-bot' })
    const instrumentation = new OpenAIInstrumentation({ tracerProvider: provider })
    instrumentation.manuallyInstrument(OpenAI)
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' })
  })
  after(async () => {
    await provider?.shutdown()
    await Promise.all([stack?.stop(), fake?.close()])
  })

  for (const streamed of [false, true]) {
    it(`stores a ${streamed ? 'streamed' : 'plain'} chat completion with model, vendor, tokens, session, user and cost`, async () => {
      const sessionId = `oi-session-${streamed}`
      const userId = `oi-user-${streamed}`
      const tracer = provider.getTracer('support-bot')
      const traceId = await tracer.startActiveSpan('answer question', async (turn) => {
        const scoped = setUser(setSession(context.active(), { sessionId }), { userId })
        await context.with(scoped, async () => {
          const messages = [{ role: 'user' as const, content: 'How long do refunds take?' }]
          if (!streamed) await client.chat.completions.create({ model: 'gpt-4o-mini', messages })
          else for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } })) void chunk
        })
        turn.end()
        return turn.spanContext().traceId
      })
      await provider.forceFlush()
      const spans = await storedTrace(stack, traceId, 2)
      const llm = spans.find((span) => span.parentSpanId !== null)
      if (!streamed) assertPricedOpenAiChat(llm, 'OpenInference', { responseModel: 'gpt-4o-mini-2024-07-18' })
      else {
        // This instrumentation reads neither the usage chunk nor the model from a stream (it skips
        // chunks without choices): the span has the model asked for and no tokens, so no cost.
        assert.deepEqual(
          [llm?.llmVendor, llm?.llmModel, llm?.llmResponseModel, llm?.inputTokens, llm?.outputTokens, llm?.totalCostUsd],
          ['openai', 'gpt-4o-mini', 'gpt-4o-mini', null, null, null],
        )
      }
      assert.deepEqual([llm?.sessionId, llm?.userId], [sessionId, userId])
      assert.equal(trace.getActiveSpan(), undefined)
    })
  }
})
