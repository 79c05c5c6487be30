import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, streamText } from 'ai'
import { listedTraces, storedTrace } from '../../src/all-in-one.ts'
import { fakeAnswer, fakeUsage } from '../../src/fake-openai.server.ts'
import { judgePromptOf } from '../../src/judge-expectations.ts'
import { assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { assertFoundBySearchAndFilter } from '../../src/search-expectations.ts'
import { startLlmStack, type LlmStack } from '../../src/llm-stack.ts'

// The Vercel AI SDK (ai 6 with @ai-sdk/openai 3) with its telemetry on, exporting with the
// OpenTelemetry protobuf exporter: an outer ai.generateText / ai.streamText span with only ai.*
// names (the call as the application made it, usage summed over its steps) and a provider-call
// child (…doGenerate / …doStream) with ai.* and gen_ai.* names. Both get model, tokens, session
// and user; the trace's cost counts the call once.

describe('Vercel AI SDK telemetry', () => {
  let llm: LlmStack

  before(async () => {
    llm = await startLlmStack()
  })
  after(() => llm?.stop())

  for (const streamed of [false, true]) {
    it(`stores ${streamed ? 'streamText' : 'generateText'} with model, vendor, tokens, session, user and cost`, async () => {
      const sessionId = `vercel-session-${streamed}`
      const userId = `vercel-user-${streamed}`
      // Chat Completions explicitly: @ai-sdk/openai's default is the Responses API.
      const model = createOpenAI({ baseURL: llm.fake.baseURL, apiKey: 'sk-test' }).chat('gpt-4o-mini')
      const telemetry = { isEnabled: true, tracer: llm.provider.getTracer('support-bot'), metadata: { sessionId, userId } }
      const prompt = 'How long do refunds take?'
      const traceId = await llm.turn(async () => {
        if (!streamed) await generateText({ model, prompt, experimental_telemetry: telemetry })
        else for await (const part of streamText({ model, prompt, experimental_telemetry: telemetry }).textStream) void part
      })
      const outerName = streamed ? 'ai.streamText' : 'ai.generateText'
      const spans = await storedTrace(llm.stack, traceId, 3)
      const call = spans.find((span) => span.name === `${outerName}.${streamed ? 'doStream' : 'doGenerate'}`)
      assertPricedOpenAiChat(call, 'Vercel AI SDK provider call', { responseModel: 'gpt-4o-mini-2024-07-18' })
      assert.deepEqual([call?.sessionId, call?.userId], [sessionId, userId])

      const outer = spans.find((span) => span.name === outerName)
      assert.deepEqual(
        [outer?.llmModel, outer?.inputTokens, outer?.outputTokens, outer?.totalTokens, outer?.sessionId, outer?.userId],
        ['gpt-4o-mini', fakeUsage.prompt_tokens, fakeUsage.completion_tokens, fakeUsage.total_tokens, sessionId, userId],
      )
      const [row] = await listedTraces(llm.stack, { session: sessionId })
      assert.deepEqual([row?.traceId, row?.userId, row?.models], [traceId, userId, ['gpt-4o-mini']])
      assert.equal(row?.costUsd, call?.totalCostUsd, 'the trace counts the call once, not once per span')
      await assertFoundBySearchAndFilter(llm.stack, traceId, { words: ['refunds', 'business'], model: 'gpt-4o-mini', responseModel: 'gpt-4o-mini-2024-07-18', vendor: 'openai' }, `Vercel AI SDK, ${streamed ? 'streamText' : 'generateText'}`)
    })
  }

  it('gives a judge the prompt and the answer, not the telemetry’s session or user', async () => {
    const model = createOpenAI({ baseURL: llm.fake.baseURL, apiKey: 'sk-test' }).chat('gpt-4o-mini')
    const telemetry = { isEnabled: true, tracer: llm.provider.getTracer('support-bot'), metadata: { sessionId: 'vercel-session-judge', userId: 'vercel-user-judge' } }
    const traceId = await llm.turn(() => generateText({ model, prompt: 'How long do refunds take?', experimental_telemetry: telemetry }))
    const spans = await storedTrace(llm.stack, traceId, 3)
    const prompt = await judgePromptOf(llm.stack, llm.fake, traceId, spans)
    assert.equal(prompt, `Question: user: How long do refunds take?\nAnswer: assistant: ${fakeAnswer}`)
    for (const id of ['vercel-session-judge', 'vercel-user-judge']) assert.ok(!prompt.includes(id), `the judge is not sent ${id}`)
  })
})
