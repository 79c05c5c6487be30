import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setSession, setUser } from '@arizeai/openinference-core'
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai'
import { context } from '@opentelemetry/api'
import OpenAI from 'openai'
import { storedTrace } from '../../src/all-in-one.ts'
import { fakeAnswer, fakeUsage } from '../../src/fake-openai.server.ts'
import { judgePromptOf } from '../../src/judge-expectations.ts'
import { assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { assertFoundBySearchAndFilter } from '../../src/search-expectations.ts'
import { startLlmStack, type LlmStack } from '../../src/llm-stack.ts'

// OpenInference (@arizeai/openinference-instrumentation-openai) around the real `openai` client,
// exporting with the OpenTelemetry protobuf exporter: its `llm.*` names (llm.model_name,
// llm.provider, llm.token_count.*) and its session and user context (setSession, setUser, which
// it writes as session.id and user.id) must become the same columns as every other library's.

describe('OpenInference instrumentation of the openai client', () => {
  let llm: LlmStack
  let client: OpenAI

  before(async () => {
    llm = await startLlmStack()
    new OpenAIInstrumentation({ tracerProvider: llm.provider }).manuallyInstrument(OpenAI)
    client = new OpenAI({ baseURL: llm.fake.baseURL, apiKey: 'sk-test' })
  })
  after(() => llm?.stop())

  for (const streamed of [false, true]) {
    it(`stores a ${streamed ? 'streamed' : 'plain'} chat completion with model, vendor, tokens, session, user and cost`, async () => {
      const sessionId = `oi-session-${streamed}`
      const userId = `oi-user-${streamed}`
      const traceId = await llm.turn(() =>
        context.with(setUser(setSession(context.active(), { sessionId }), { userId }), async () => {
          const messages = [{ role: 'user' as const, content: 'How long do refunds take?' }]
          if (!streamed) await client.chat.completions.create({ model: 'gpt-4o-mini', messages })
          else for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } })) void chunk
        }),
      )
      const spans = await storedTrace(llm.stack, traceId, 2)
      const call = spans.find((span) => span.parentSpanId !== null)
      if (!streamed) assertPricedOpenAiChat(call, 'OpenInference', { responseModel: 'gpt-4o-mini-2024-07-18' })
      else {
        // This instrumentation reads neither the usage chunk nor the model from a stream (it skips
        // chunks without choices): the span has the model asked for and no tokens, so no cost.
        assert.deepEqual(
          [call?.llmVendor, call?.llmModel, call?.llmResponseModel, call?.inputTokens, call?.outputTokens, call?.totalCostUsd],
          ['openai', 'gpt-4o-mini', 'gpt-4o-mini', null, null, null],
        )
      }
      assert.deepEqual([call?.sessionId, call?.userId], [sessionId, userId])
      // A stream's tokens and cost are unknown here: the trace shows null, not 0, and no bound on
      // them finds it; words, model, vendor and time still do.
      const row = await assertFoundBySearchAndFilter(
        llm.stack, traceId,
        { words: ['refunds', 'business'], model: 'gpt-4o-mini', responseModel: streamed ? null : 'gpt-4o-mini-2024-07-18', vendor: 'openai' },
        `OpenInference, ${streamed ? 'streamed' : 'plain'}`,
      )
      assert.deepEqual([row.totalTokens, row.costUsd, row.tokensEstimated], streamed ? [null, null, false] : [fakeUsage.total_tokens, call?.totalCostUsd, false])
    })
  }

  it('gives a judge the messages of the call, not its request as JSON, nor its session or user', async () => {
    const traceId = await llm.turn(() =>
      context.with(setUser(setSession(context.active(), { sessionId: 'oi-session-judge' }), { userId: 'oi-user-judge' }), () =>
        client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'How long do refunds take?' }] }),
      ),
    )
    const spans = await storedTrace(llm.stack, traceId, 2)
    const prompt = await judgePromptOf(llm.stack, llm.fake, traceId, spans)
    assert.equal(prompt, `Question: user: How long do refunds take?\nAnswer: assistant: ${fakeAnswer}`)
    for (const id of ['oi-session-judge', 'oi-user-judge']) assert.ok(!prompt.includes(id), `the judge is not sent ${id}`)
  })
})
