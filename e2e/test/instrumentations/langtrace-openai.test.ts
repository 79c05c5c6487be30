import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import * as Langtrace from '@langtrase/typescript-sdk'
import OpenAI from 'openai'
import { startAllInOne, storedTrace, type AllInOne } from '../../src/all-in-one.ts'
import { fakeAnswer, startFakeOpenAi, type FakeOpenAi } from '../../src/fake-openai.server.ts'
import { judgePromptOf, judgeSettings } from '../../src/judge-expectations.ts'
import { assertPricedCountedChat, assertPricedOpenAiChat } from '../../src/llm-expectations.ts'
import { assertFoundBySearchAndFilter } from '../../src/search-expectations.ts'

// The Langtrace TypeScript SDK instrumenting the real `openai` client and sending its own JSON
// span arrays to /api/trace. Session and user ride on its withAdditionalAttributes, under the
// names Langtrace's SDKs use (session.id, user_id). The SDK registers a global tracer provider,
// so this library has a test file (a process) of its own. It is set up as the README's snippet
// says: in an ES module the SDK cannot patch an imported `openai` itself and is handed it.

describe('Langtrace TypeScript SDK instrumentation of the openai client', () => {
  let stack: AllInOne
  let fake: FakeOpenAi
  let client: OpenAI

  before(async () => {
    ;[stack, fake] = await Promise.all([startAllInOne(judgeSettings), startFakeOpenAi()])
    Langtrace.init({
      api_key: stack.projectKey,
      api_host: `${stack.service.url}/api/trace`,
      batch: false,
      instrumentations: { openai: OpenAI },
      disable_latest_version_check: true,
      logging: { disable: true },
    })
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' })
  })
  after(async () => {
    await Promise.all([stack?.stop(), fake?.close()])
  })

  for (const streamed of [false, true]) {
    it(`stores a ${streamed ? 'streamed' : 'plain'} chat completion with model, vendor, tokens, session, user and cost`, async () => {
      const sessionId = `lt-session-${streamed}`
      const userId = `lt-user-${streamed}`
      const messages = [{ role: 'user' as const, content: 'How long do refunds take?' }]
      const traceId = await Langtrace.withLangTraceRootSpan(async (_spanId, rootTraceId) => {
        await Langtrace.withAdditionalAttributes(async () => {
          if (!streamed) await client.chat.completions.create({ model: 'gpt-4o-mini', messages })
          else for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true })) void chunk
        }, { 'session.id': sessionId, user_id: userId })
        return rootTraceId
      }, 'answer question')
      const spans = await storedTrace(stack, traceId, 2)
      const llm = spans.find((span) => span.llmModel !== null)
      if (!streamed) assertPricedOpenAiChat(llm, 'Langtrace', { responseModel: 'gpt-4o-mini-2024-07-18' })
      // For a stream the SDK (6.3) counts tokens itself, from the text: priced as reported.
      else assertPricedCountedChat(llm, 'Langtrace, streamed')
      assert.deepEqual([llm?.sessionId, llm?.userId], [sessionId, userId])
      // The SDK's own count of a stream is marked estimated, on the span and on its trace.
      assert.equal(llm?.tokensEstimated, streamed)
      // Langtrace records the prompt and the answer as span events: both are found.
      const row = await assertFoundBySearchAndFilter(stack, traceId, { words: ['refunds', 'business'], model: 'gpt-4o-mini', responseModel: 'gpt-4o-mini-2024-07-18', vendor: 'openai' }, `Langtrace, ${streamed ? 'streamed' : 'plain'}`)
      assert.equal(row.tokensEstimated, streamed)
    })
  }

  it('gives a judge the messages, recorded as span events, and no session or user', async () => {
    const traceId = await Langtrace.withLangTraceRootSpan(async (_spanId, rootTraceId) => {
      await Langtrace.withAdditionalAttributes(async () => {
        await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'How long do refunds take?' }] })
      }, { 'session.id': 'lt-session-judge', user_id: 'lt-user-judge' })
      return rootTraceId
    }, 'answer question')
    const spans = await storedTrace(stack, traceId, 2)
    const prompt = await judgePromptOf(stack, fake, traceId, spans)
    assert.equal(prompt, `Question: user: How long do refunds take?\nAnswer: assistant: ${fakeAnswer}`)
    for (const id of ['lt-session-judge', 'lt-user-judge']) assert.ok(!prompt.includes(id), `the judge is not sent ${id}`)
  })
})
