import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { llmCallOf, ownSidesOf, type Attributes } from '../src/index.ts'

const s = (stringValue: string) => ({ stringValue })

describe('llmCallOf', () => {
  it('reads a stored span’s model, vendor, tokens, cost and estimate from its columns, and its messages', () => {
    const call = llmCallOf({
      attributes: { 'llm.prompts': s('[{"role":"user","content":"hi"}]') },
      events: [{ name: 'gen_ai.content.completion', attributes: { 'gen_ai.completion': s('[{"role":"assistant","content":"hello"}]') } }],
      llmVendor: 'openai',
      llmModel: 'gpt-4o-mini',
      llmResponseModel: 'gpt-4o-mini-2024-07-18',
      llmRequestType: 'chat',
      inputTokens: 10,
      outputTokens: 2,
      totalTokens: 12,
      cachedInputTokens: null,
      cacheWriteInputTokens: null,
      reasoningTokens: 1,
      tokensEstimated: true,
      inputCostUsd: 0.0000015,
      outputCostUsd: 0.0000012,
      totalCostUsd: 0.0000027,
      costSource: 'price_table',
    })
    assert.deepEqual(
      { ...call, conversation: call?.conversation?.messages.map((message) => `${message.role}: ${message.content}`) },
      {
        vendor: 'openai',
        model: 'gpt-4o-mini',
        responseModel: 'gpt-4o-mini-2024-07-18',
        requestType: 'chat',
        tokens: { input: 10, output: 2, total: 12, cachedInput: null, cacheWrite: null, reasoning: 1 },
        cost: { input: 0.0000015, output: 0.0000012, total: 0.0000027, source: 'price_table' },
        estimated: true,
        conversation: ['user: hi', 'assistant: hello'],
      },
    )
  })

  it('is an LLM call with messages only, or with counts only; a span with neither is none', () => {
    assert.equal(llmCallOf({ attributes: { 'langfuse.observation.input': s('Hi') } })?.conversation?.messages.length, 1)
    const counted = llmCallOf({ attributes: {}, inputTokens: 5 })
    assert.deepEqual([counted?.tokens.input, counted?.model, counted?.conversation, counted?.estimated], [5, null, null, false])
    assert.equal(llmCallOf({ attributes: { 'http.route': s('/chat') }, events: [] }), null)
  })
})

describe('ownSidesOf', () => {
  it('reads a span’s own input and output in each convention, the first that holds text', () => {
    const of = (attributes: Attributes) => ownSidesOf({ attributes })
    assert.deepEqual(of({ 'input.value': s('q'), 'output.value': s('a') }), { input: 'q', output: 'a' })
    assert.deepEqual(of({ 'traceloop.entity.input': s('{"q":1}'), 'traceloop.entity.output': s('a') }), { input: '{"q":1}', output: 'a' })
    assert.deepEqual(of({ 'langfuse.trace.input': s('q'), 'langfuse.trace.output': s('a') }), { input: 'q', output: 'a' })
    assert.deepEqual(of({ 'input.value': s('  '), 'traceloop.entity.input': s('second') }), { input: 'second', output: undefined })
    assert.deepEqual(of({ 'session.id': s('s-1'), 'user.id': s('u-1') }), { input: undefined, output: undefined })
  })

  it('leaves out an OpenInference LLM span’s request and response JSON where its messages are read', () => {
    const request = s('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}')
    const llm = { 'openinference.span.kind': s('LLM'), 'input.value': request, 'input.mime_type': s('application/json'), 'output.value': s('{"choices":[]}') }
    const messages = { 'llm.input_messages.0.message.role': s('user'), 'llm.input_messages.0.message.content': s('hi') }
    assert.deepEqual(ownSidesOf({ attributes: { ...llm, ...messages } }), { input: undefined, output: undefined })
    // Without messages the JSON is all there is; a chain's span keeps its own input.
    assert.deepEqual(ownSidesOf({ attributes: llm }).input, request.stringValue)
    assert.deepEqual(ownSidesOf({ attributes: { ...messages, 'openinference.span.kind': s('CHAIN'), 'input.value': s('q') } }).input, 'q')
  })
})
