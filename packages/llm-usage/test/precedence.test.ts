import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { canonicalVendor, deriveLlmUsage, type Attributes } from '../src/index.ts'

const s = (stringValue: string) => ({ stringValue })
const i = (intValue: number | string) => ({ intValue: String(intValue) })
const fields = (attributes: Attributes) => deriveLlmUsage(attributes).fields
const cost = (attributes: Attributes) => deriveLlmUsage(attributes).callerCost

describe('precedence within a column', () => {
  it('vendor: llm.vendor, then gen_ai.provider.name, gen_ai.system, llm.provider, llm.system, ai.model.provider, LangChain metadata, langtrace.service.name', () => {
    const all: Attributes = {
      'langtrace.service.name': s('h'), metadata: s('{"ls_provider":"g","ls_model_name":"gpt-4o-mini"}'), 'ai.model.provider': s('f'), 'llm.system': s('e'),
      'llm.provider': s('d'), 'gen_ai.system': s('c'), 'gen_ai.provider.name': s('b'), 'llm.vendor': s('a'),
    }
    const order = ['llm.vendor', 'gen_ai.provider.name', 'gen_ai.system', 'llm.provider', 'llm.system', 'ai.model.provider', 'metadata', 'langtrace.service.name']
    const remaining = { ...all }
    for (const [index, key] of order.entries()) {
      assert.equal(fields(remaining).llmVendor, 'abcdefgh'[index], key)
      delete remaining[key]
    }
    assert.equal(fields(remaining).llmVendor, null)
  })

  it("reads OpenInference LangChain's provider from the run metadata, as a canonical vendor name", () => {
    assert.equal(fields({ metadata: s('{"ls_provider":"openai","ls_model_type":"chat"}') }).llmVendor, 'openai')
    assert.equal(fields({ metadata: s('{"ls_provider":"OpenAI"}') }).llmVendor, canonicalVendor('OpenAI'))
    assert.equal(fields({ metadata: s('{"thread_id":"t1"}') }).llmVendor, null, 'metadata without a provider')
    assert.equal(fields({ metadata: s('not json') }).llmVendor, null)
  })

  it('skips a value of the wrong kind and takes the next name', () => {
    assert.equal(fields({ 'llm.vendor': i(1), 'gen_ai.system': s('openai') }).llmVendor, 'openai')
    assert.equal(fields({ 'llm.usage.prompt_tokens': s('many'), 'gen_ai.usage.input_tokens': i(6) }).inputTokens, 6)
    assert.equal(fields({ 'session.id': s(''), 'gen_ai.conversation.id': s('c1') }).sessionId, 'c1')
  })

  it('models: the request model falls back to the response model; the response model has its own column', () => {
    assert.deepEqual(
      [fields({ 'gen_ai.response.model': s('d'), 'llm.response.model': s('c'), 'gen_ai.request.model': s('b') })].map((f) => [f.llmModel, f.llmResponseModel]),
      [['b', 'c']],
    )
    const responseOnly = fields({ 'gen_ai.response.model': s('gpt-4o-2024-08-06') })
    assert.deepEqual([responseOnly.llmModel, responseOnly.llmResponseModel], ['gpt-4o-2024-08-06', 'gpt-4o-2024-08-06'])
    assert.equal(fields({ 'llm.request.model_name': s('req'), 'llm.model_name': s('resp') }).llmModel, 'req')
    assert.equal(fields({ 'llm.model': s('legacy') }).llmModel, 'legacy')
  })

  it('tokens: intValue, integral doubleValue or numeric strings; a missing total is summed, a reported one kept', () => {
    const span = fields({ 'gen_ai.usage.input_tokens': { doubleValue: 10 }, 'gen_ai.usage.completion_tokens': s('5') })
    assert.deepEqual([span.inputTokens, span.outputTokens, span.totalTokens], [10, 5, 15])
    assert.equal(fields({ 'llm.usage.prompt_tokens': i(3), 'llm.usage.completion_tokens': i(4), 'gen_ai.usage.total_tokens': i(99) }).totalTokens, 99)
    const bad = fields({ 'llm.usage.prompt_tokens': s('many'), 'gen_ai.usage.input_tokens': { doubleValue: 2.5 }, 'llm.usage.completion_tokens': { doubleValue: 'NaN' }, 'llm.usage.total_tokens': i(-1) })
    assert.deepEqual([bad.inputTokens, bad.outputTokens, bad.totalTokens], [null, null, null])
  })

  it('reads the legacy Langtrace llm.token.counts JSON, and ignores it when it is not JSON', () => {
    const span = fields({ 'llm.token.counts': s('{"input_tokens": 14, "output_tokens": 2, "total_tokens": 16, "cached_tokens": 4}') })
    assert.deepEqual([span.inputTokens, span.outputTokens, span.totalTokens, span.cachedInputTokens], [14, 2, 16, 4])
    assert.equal(fields({ 'llm.token.counts': s('{input_tokens: 14') }).inputTokens, null)
  })

  it('cache and reasoning tokens: the OTel names before OpenLLMetry, Langtrace, OpenInference and the Vercel AI SDK', () => {
    assert.equal(fields({ 'gen_ai.usage.cache_read_input_tokens': i(2), 'gen_ai.usage.cache_read.input_tokens': i(1) }).cachedInputTokens, 1)
    assert.equal(fields({ 'ai.usage.cachedInputTokens': i(3), 'llm.token_count.prompt_details.cache_read': i(2) }).cachedInputTokens, 2)
    assert.equal(fields({ 'ai.usage.inputTokenDetails.cacheWriteTokens': i(5) }).cacheWriteInputTokens, 5)
    assert.equal(fields({ 'llm.usage.reasoning_tokens': i(8), 'gen_ai.usage.reasoning.output_tokens': i(7) }).reasoningTokens, 7)
    assert.equal(fields({ 'ai.usage.outputTokenDetails.reasoningTokens': i(9) }).reasoningTokens, 9)
  })

  it('session and user: OTel and OpenInference names first, integer ids as text', () => {
    assert.equal(fields({ 'traceloop.association.properties.session_id': s('t'), 'session.id': s('s') }).sessionId, 's')
    assert.equal(fields({ 'ai.telemetry.metadata.sessionId': s('v'), 'gen_ai.conversation.id': s('g') }).sessionId, 'g')
    assert.equal(fields({ 'gen_ai.user': s('param'), user_id: s('langtrace') }).userId, 'langtrace')
    assert.equal(fields({ 'user.id': i(42) }).userId, '42')
    assert.equal(fields({ 'enduser.id': s('e'), 'llm.user': s('u') }).userId, 'e')
  })

  it('operation: gen_ai.operation.name as sent, other libraries translated to its vocabulary', () => {
    assert.equal(fields({ 'gen_ai.operation.name': s('chat') }).llmRequestType, 'chat')
    assert.equal(fields({ 'llm.request.type': s('completion'), 'gen_ai.operation.name': s('chat') }).llmRequestType, 'text_completion')
    assert.equal(fields({ 'llm.request.type': s('chat_completion') }).llmRequestType, 'chat')
    assert.equal(fields({ 'llm.request.type': s('audio') }).llmRequestType, 'audio')
    assert.equal(fields({ 'ai.operationId': s('ai.embedMany') }).llmRequestType, 'embeddings')
    assert.equal(fields({ 'openinference.span.kind': s('RETRIEVER') }).llmRequestType, 'retriever')
    assert.equal(fields({ 'gen_ai.operation.name': s('images_generate') }).llmRequestType, 'images_generate')
  })
})

describe('vendor names', () => {
  it('are the gen_ai.provider.name values whichever library reported them', () => {
    const cases: Array<[string, string]> = [
      ['OpenAI', 'openai'], ['openai.chat', 'openai'], ['openai.responses', 'openai'], ['Anthropic', 'anthropic'], ['anthropic.messages', 'anthropic'],
      ['Azure', 'azure.ai.openai'], ['az.ai.openai', 'azure.ai.openai'], ['azure.ai.inference', 'azure.ai.inference'],
      ['AWS Bedrock', 'aws.bedrock'], ['amazon-bedrock', 'aws.bedrock'], ['aws', 'aws.bedrock'],
      ['google.vertex.chat', 'gcp.vertex_ai'], ['vertex_ai', 'gcp.vertex_ai'], ['VertexAI', 'gcp.vertex_ai'],
      ['google.generative-ai', 'gcp.gemini'], ['gemini', 'gcp.gemini'], ['google', 'gcp.gen_ai'],
      ['mistralai', 'mistral_ai'], ['mistral.chat', 'mistral_ai'], ['XAI', 'x_ai'], ['xai.chat', 'x_ai'],
      ['groq.chat', 'groq'], ['ollama.chat', 'ollama'], ['Pinecone', 'pinecone'], ['arch', 'arch'],
    ]
    assert.deepEqual(cases.map(([reported]) => [reported, canonicalVendor(reported)]), cases)
  })
})

describe('a cost reported by the caller', () => {
  it('is read in USD from the OpenInference, OpenLLMetry and Langtrace names', () => {
    assert.deepEqual(cost({ 'llm.cost.prompt': { doubleValue: 0.001 }, 'llm.cost.completion': { doubleValue: 0.002 } }), { inputCostUsd: 0.001, outputCostUsd: 0.002, totalCostUsd: 0.003 })
    assert.deepEqual(cost({ 'gen_ai.usage.cost': { doubleValue: 0.5 } }), { inputCostUsd: null, outputCostUsd: null, totalCostUsd: 0.5 })
    assert.deepEqual(cost({ 'llm.usage.cost': s('0.25') }), { inputCostUsd: null, outputCostUsd: null, totalCostUsd: 0.25 })
    assert.deepEqual(cost({ 'llm.cost.total': { doubleValue: -1 }, 'gen_ai.usage.cost': s('lots') }), { inputCostUsd: null, outputCostUsd: null, totalCostUsd: null })
  })
})
