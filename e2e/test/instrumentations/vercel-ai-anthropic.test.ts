import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { generateText, streamText } from 'ai'
import { listedTraces, storedTrace } from '../../src/all-in-one.ts'
import { answeredClaude, fakeUsage } from '../../src/fake-openai.server.ts'
import { startLlmStack, type LlmStack } from '../../src/llm-stack.ts'

// The Vercel AI SDK's Anthropic provider (@ai-sdk/anthropic) against the local server's
// Anthropic Messages API, telemetry on: the provider call is stored with Anthropic as its vendor,
// Claude's dated model, Anthropic's input and output token counts, and a price-table cost, and
// a user finds it by its words, its model and its vendor, and not under OpenAI.

describe('Vercel AI SDK telemetry, Anthropic provider', () => {
  let llm: LlmStack

  before(async () => {
    llm = await startLlmStack()
  })
  after(() => llm?.stop())

  for (const streamed of [false, true]) {
    it(`stores ${streamed ? 'streamText' : 'generateText'} on Claude with vendor, tokens and cost, found by search and filter`, async () => {
      const model = createAnthropic({ baseURL: llm.fake.baseURL, apiKey: 'sk-ant-test' })('claude-3-5-haiku-latest')
      const telemetry = { isEnabled: true, tracer: llm.provider.getTracer('support-bot') }
      const prompt = 'Do kangaroos get refunds?'
      const traceId = await llm.turn(async () => {
        // maxOutputTokens given: the SDK does not know this alias's limit and would warn.
        if (!streamed) await generateText({ model, prompt, maxOutputTokens: 256, experimental_telemetry: telemetry })
        else for await (const part of streamText({ model, prompt, maxOutputTokens: 256, experimental_telemetry: telemetry }).textStream) void part
      })
      const spans = await storedTrace(llm.stack, traceId, 3)
      const call = spans.find((span) => span.name.endsWith(streamed ? '.doStream' : '.doGenerate'))
      assert.ok(call, JSON.stringify(spans.map((span) => span.name)))
      assert.deepEqual(
        [call.llmVendor, call.llmModel, call.llmResponseModel, call.inputTokens, call.outputTokens],
        ['anthropic', 'claude-3-5-haiku-latest', answeredClaude('claude-3-5-haiku-latest'), fakeUsage.prompt_tokens, fakeUsage.completion_tokens],
      )
      assert.ok((call.totalCostUsd ?? 0) > 0 && call.costSource === 'price_table', `priced: ${call.totalCostUsd} ${call.costSource}`)

      const found = async (filters: Record<string, string>) => (await listedTraces(llm.stack, { ...filters, limit: '500' })).some((row) => row.traceId === traceId)
      for (const q of ['kangaroos', 'business']) assert.ok(await found({ q }), `q=${q}`)
      const filters: Array<Record<string, string>> = [{ vendor: 'Anthropic' }, { model: 'claude-3-5-haiku-latest' }, { model: answeredClaude('claude-3-5-haiku-latest') }]
      for (const filter of filters) assert.ok(await found(filter), JSON.stringify(filter))
      assert.equal(await found({ vendor: 'openai' }), false)
    })
  }
})
