import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createOpenAI } from '@ai-sdk/openai'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { generateText, streamText } from 'ai'
import { listedTraces, startAllInOne, storedTrace, type AllInOne } from '../../src/all-in-one.ts'
import { fakeUsage, startFakeOpenAi, type FakeOpenAi } from '../../src/fake-openai.server.ts'
import { assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { otlpTracerProvider } from '../../src/otel-clients.ts'

// The Vercel AI SDK (ai 5 with @ai-sdk/openai) with its telemetry on, exporting with the
// OpenTelemetry protobuf exporter: an outer ai.generateText / ai.streamText span with only ai.*
// names (the call as the application made it, usage summed over its steps) and a provider-call
// child (…doGenerate / …doStream) with ai.* and gen_ai.* names. Both get model, tokens, session
// and user; the trace's cost counts the call once.

describe('Vercel AI SDK telemetry', () => {
  let stack: AllInOne
  let fake: FakeOpenAi
  let provider: BasicTracerProvider

  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    ;[stack, fake] = await Promise.all([startAllInOne(), startFakeOpenAi()])
    provider = otlpTracerProvider({ url: `${stack.service.url}/v1/traces`, apiKey: stack.projectKey, encoding: 'protobuf', serviceName: 'support-bot' })
  })
  after(async () => {
    await provider?.shutdown()
    await Promise.all([stack?.stop(), fake?.close()])
  })

  for (const streamed of [false, true]) {
    it(`stores ${streamed ? 'streamText' : 'generateText'} with model, vendor, tokens, session, user and cost`, async () => {
      const sessionId = `vercel-session-${streamed}`
      const userId = `vercel-user-${streamed}`
      // Chat Completions explicitly: @ai-sdk/openai's default is the Responses API.
      const model = createOpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' }).chat('gpt-4o-mini')
      const tracer = provider.getTracer('support-bot')
      const telemetry = { isEnabled: true, tracer, metadata: { sessionId, userId } }
      const prompt = 'How long do refunds take?'
      const traceId = await tracer.startActiveSpan('answer question', async (turn) => {
        if (!streamed) await generateText({ model, prompt, experimental_telemetry: telemetry })
        else {
          const result = streamText({ model, prompt, experimental_telemetry: telemetry })
          for await (const part of result.textStream) void part
        }
        turn.end()
        return turn.spanContext().traceId
      })
      await provider.forceFlush()
      const outerName = streamed ? 'ai.streamText' : 'ai.generateText'
      const spans = await storedTrace(stack, traceId, 3)
      const call = spans.find((span) => span.name === `${outerName}.${streamed ? 'doStream' : 'doGenerate'}`)
      assertPricedOpenAiChat(call, 'Vercel AI SDK provider call', { responseModel: 'gpt-4o-mini-2024-07-18' })
      assert.deepEqual([call?.sessionId, call?.userId], [sessionId, userId])

      const outer = spans.find((span) => span.name === outerName)
      assert.deepEqual(
        [outer?.llmModel, outer?.inputTokens, outer?.outputTokens, outer?.totalTokens, outer?.sessionId, outer?.userId],
        ['gpt-4o-mini', fakeUsage.prompt_tokens, fakeUsage.completion_tokens, fakeUsage.total_tokens, sessionId, userId],
      )
      const [row] = await listedTraces(stack, { session: sessionId })
      assert.deepEqual([row?.traceId, row?.userId, row?.models], [traceId, userId, ['gpt-4o-mini']])
      assert.equal(row?.costUsd, call?.totalCostUsd, 'the trace counts the call once, not once per span')
    })
  }
})
