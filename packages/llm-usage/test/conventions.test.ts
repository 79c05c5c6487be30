import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { deriveLlmUsage, priceCall, type LlmFields, type SpanCost } from '../src/index.ts'
import { fixtureSpans } from './support/fixture-spans.ts'

// One realistic span per instrumentation library (test-fixtures/llm-conventions), each column
// derived from that library's own attribute names, and the call priced from the price table.

const none: LlmFields = {
  llmVendor: null, llmModel: null, llmResponseModel: null, llmRequestType: null, inputTokens: null, outputTokens: null,
  totalTokens: null, cachedInputTokens: null, cacheWriteInputTokens: null, reasoningTokens: null, tokensEstimated: false, sessionId: null, userId: null,
}
const table = (inputCostUsd: number, outputCostUsd: number, totalCostUsd: number): SpanCost => ({ inputCostUsd, outputCostUsd, totalCostUsd, costSource: 'price_table' })

function derived(file: string, spanName?: string) {
  const spans = fixtureSpans(file)
  const span = spanName === undefined ? spans[0] : spans.find((candidate) => candidate.name === spanName)
  assert.ok(span, `${file} has the span`)
  const { fields, callerCost } = deriveLlmUsage(span.attributes)
  assert.deepEqual(callerCost, { inputCostUsd: null, outputCostUsd: null, totalCostUsd: null })
  return { fields, priced: priceCall(fields, span.start) }
}

describe('LLM columns from each instrumentation library', () => {
  it('OpenLLMetry today: gen_ai.provider.name and the current OTel names, association properties', () => {
    const { fields, priced } = derived('openllmetry-openai.json')
    assert.deepEqual(fields, {
      ...none, llmVendor: 'openai', llmModel: 'gpt-4o-mini', llmResponseModel: 'gpt-4o-mini-2024-07-18', llmRequestType: 'chat',
      inputTokens: 1840, outputTokens: 96, totalTokens: 1936, cachedInputTokens: 1536, sessionId: 'sess-7f3a', userId: 'user-1042',
    })
    // 304 uncached input tokens at $0.15/M, 1536 cached at $0.075/M, 96 output at $0.60/M.
    assert.deepEqual(priced, { cost: table(0.0001608, 0.0000576, 0.0002184), unpriced: null })
  })

  it('OpenLLMetry before: gen_ai.system, deprecated prompt/completion tokens, llm.* total, cache writes', () => {
    const { fields, priced } = derived('openllmetry-legacy-anthropic.json')
    assert.deepEqual(fields, {
      ...none, llmVendor: 'anthropic', llmModel: 'claude-3-5-sonnet-20241022', llmResponseModel: 'claude-3-5-sonnet-20241022',
      llmRequestType: 'chat', inputTokens: 2100, outputTokens: 310, totalTokens: 2410, cachedInputTokens: 1200, cacheWriteInputTokens: 800,
      sessionId: 'sess-legacy',
    })
    // 100 uncached at $3/M, 1200 cache reads at $0.30/M, 800 cache writes at $3.75/M; 310 output at $15/M.
    assert.deepEqual(priced, { cost: table(0.00366, 0.00465, 0.00831), unpriced: null })
  })

  it('OpenInference: llm.provider, the model asked for from llm.invocation_parameters, llm.model_name, llm.token_count.*, session.id and user.id', () => {
    const { fields, priced } = derived('openinference-openai.json')
    assert.deepEqual(fields, {
      ...none, llmVendor: 'openai', llmModel: 'o3-mini', llmResponseModel: 'o3-mini-2025-01-31', llmRequestType: 'chat',
      inputTokens: 1200, outputTokens: 640, totalTokens: 1840, cachedInputTokens: 1024, reasoningTokens: 512, sessionId: 'sess-oi-1', userId: 'user-oi-9',
    })
    // Reasoning tokens are output tokens at OpenAI's output price ($4.40/M for all 640).
    assert.deepEqual(priced, { cost: table(0.0007568, 0.002816, 0.0035728), unpriced: null })
  })

  it('Vercel AI SDK 5: the outer call from ai.* names only, the provider call from both', () => {
    const outer = derived('vercel-ai-sdk-5.json', 'ai.generateText')
    assert.deepEqual(outer.fields, {
      ...none, llmVendor: 'openai', llmModel: 'gpt-4.1-mini', llmRequestType: 'invoke_agent', inputTokens: 900, outputTokens: 120,
      totalTokens: 1020, cachedInputTokens: 0, reasoningTokens: 0, sessionId: 'sess-v-77', userId: 'user-v-3',
    })
    assert.deepEqual(outer.priced, { cost: table(0.00036, 0.000192, 0.000552), unpriced: null })
    const call = derived('vercel-ai-sdk-5.json', 'ai.generateText.doGenerate')
    assert.deepEqual(call.fields, {
      ...none, llmVendor: 'openai', llmModel: 'gpt-4.1-mini', llmResponseModel: 'gpt-4.1-mini-2025-04-14', llmRequestType: 'chat',
      inputTokens: 900, outputTokens: 120, totalTokens: 1020, sessionId: 'sess-v-77', userId: 'user-v-3',
    })
    assert.deepEqual(call.priced, { cost: table(0.00036, 0.000192, 0.000552), unpriced: null })
  })

  it('Vercel AI SDK 4: promptTokens and completionTokens, the total summed', () => {
    const { fields, priced } = derived('vercel-ai-sdk-4.json')
    assert.deepEqual(fields, {
      ...none, llmVendor: 'anthropic', llmModel: 'claude-3-5-haiku-latest', llmRequestType: 'invoke_agent', inputTokens: 410, outputTokens: 88, totalTokens: 498,
    })
    assert.deepEqual(priced, { cost: table(0.000328, 0.000352, 0.00068), unpriced: null })
  })

  it('Langtrace Python SDK over OTLP: gen_ai.* with cached_tokens, session.id and user_id', () => {
    const { fields, priced } = derived('langtrace-python-otlp.json')
    assert.deepEqual(fields, {
      ...none, llmVendor: 'openai', llmModel: 'gpt-4o', llmResponseModel: 'gpt-4o-2024-08-06', llmRequestType: 'chat', inputTokens: 3000,
      outputTokens: 250, totalTokens: 3250, cachedInputTokens: 2048, sessionId: 'lt-session-1', userId: 'lt-user-1',
    })
    assert.deepEqual(priced, { cost: table(0.00494, 0.0025, 0.00744), unpriced: null })
  })

  it('current OTel GenAI names: provider aws.bedrock, cache read/creation, reasoning, conversation id', () => {
    const { fields, priced } = derived('otel-genai-bedrock.json')
    assert.deepEqual(fields, {
      ...none, llmVendor: 'aws.bedrock', llmModel: 'anthropic.claude-sonnet-4-20250514-v1:0', llmRequestType: 'chat', inputTokens: 5200,
      outputTokens: 700, totalTokens: 5900, cachedInputTokens: 4000, cacheWriteInputTokens: 1000, reasoningTokens: 300,
      sessionId: 'conv_5j66UpCpwteGg4YSxUnt7lPY', userId: 'user-otel-1',
    })
    // Priced by Bedrock's list: 200 uncached at $3/M, 4000 reads at $0.30/M, 1000 writes at $3.75/M; 700 output at $15/M.
    assert.deepEqual(priced, { cost: table(0.00555, 0.0105, 0.01605), unpriced: null })
  })
})
