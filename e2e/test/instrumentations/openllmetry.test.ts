import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { OpenAIInstrumentation } from '@traceloop/instrumentation-openai'
import OpenAI from 'openai'
import { listedTraces, storedTrace } from '../../src/all-in-one.ts'
import { fakeAnswer } from '../../src/fake-openai.server.ts'
import { judgePromptOf } from '../../src/judge-expectations.ts'
import { assertPricedCountedChat, assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { startLlmStack, type LlmStack } from '../../src/llm-stack.ts'
import { assertFoundBySearchAndFilter } from '../../src/search-expectations.ts'

// OpenLLMetry (@traceloop/instrumentation-openai) around the real `openai` client, exporting with
// the OpenTelemetry protobuf exporter. It sends the current GenAI names (gen_ai.provider.name,
// gen_ai.request.model, gen_ai.usage.*). Without Traceloop's own SDK (whose span processor adds
// association properties) an application names the conversation and the user on its own span,
// with the GenAI and OpenTelemetry names (gen_ai.conversation.id, user.id): the trace carries them.

describe('OpenLLMetry instrumentation of the openai client', () => {
  let llm: LlmStack
  let client: OpenAI

  before(async () => {
    llm = await startLlmStack()
    // enrichTokens: this instrumentation (0.27) does not read a stream's usage chunk; with it, it
    // counts a stream's tokens itself (tiktoken), the documented way to have them.
    const instrumentation = new OpenAIInstrumentation({ enrichTokens: true })
    instrumentation.setTracerProvider(llm.provider)
    instrumentation.manuallyInstrument(OpenAI)
    client = new OpenAI({ baseURL: llm.fake.baseURL, apiKey: 'sk-test' })
  })
  after(() => llm?.stop())

  for (const streamed of [false, true]) {
    it(`stores a ${streamed ? 'streamed' : 'plain'} chat completion with model, vendor, tokens and cost, and the trace its session and user`, async () => {
      const sessionId = `ollm-session-${streamed}`
      const userId = `ollm-user-${streamed}`
      const messages = [{ role: 'user' as const, content: 'How long do refunds take?' }]
      const traceId = await llm.turn(async () => {
        if (!streamed) await client.chat.completions.create({ model: 'gpt-4o-mini', messages })
        else for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } })) void chunk
      }, { 'gen_ai.conversation.id': sessionId, 'user.id': userId })
      const spans = await storedTrace(llm.stack, traceId, 2)
      const call = spans.find((span) => span.parentSpanId !== null)
      if (!streamed) assertPricedOpenAiChat(call, 'OpenLLMetry', { responseModel: 'gpt-4o-mini-2024-07-18' })
      // Counted by the instrumentation, not reported by the server: priced all the same.
      else assertPricedCountedChat(call, 'OpenLLMetry, streamed')
      const [row] = await listedTraces(llm.stack, { session: sessionId })
      assert.deepEqual([row?.traceId, row?.sessionId, row?.userId, row?.models, row?.totalTokens], [traceId, sessionId, userId, ['gpt-4o-mini'], call?.totalTokens])
      assert.equal(row?.costUsd, call?.totalCostUsd, 'the trace costs what its one call cost')
      // 0.27 sets no attribute saying a call streamed: its tiktoken counts cannot be told from the
      // provider's and are not marked (docs/semantic-conventions.md#estimated-tokens).
      assert.deepEqual([call?.tokensEstimated, row?.tokensEstimated], [false, false])
      await assertFoundBySearchAndFilter(llm.stack, traceId, { words: ['refunds', 'business'], model: 'gpt-4o-mini', responseModel: 'gpt-4o-mini-2024-07-18', vendor: 'openai' }, `OpenLLMetry, ${streamed ? 'streamed' : 'plain'}`)
    })
  }

  it('gives a judge the messages of the call, and not the session or user on the application’s span', async () => {
    const traceId = await llm.turn(() => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'How long do refunds take?' }] }), {
      'gen_ai.conversation.id': 'ollm-session-judge',
      'user.id': 'ollm-user-judge',
    })
    const spans = await storedTrace(llm.stack, traceId, 2)
    const prompt = await judgePromptOf(llm.stack, llm.fake, traceId, spans)
    assert.equal(prompt, `Question: user: How long do refunds take?\nAnswer: assistant: ${fakeAnswer}`)
    for (const id of ['ollm-session-judge', 'ollm-user-judge']) assert.ok(!prompt.includes(id), `the judge is not sent ${id}`)
  })
})
