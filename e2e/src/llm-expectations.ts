import assert from 'node:assert/strict'
import type { StoredLlmSpan } from './all-in-one.ts'
import { fakeUsage } from './fake-openai.server.ts'

// gpt-4o-mini's list price: $0.15 per million input tokens, $0.60 per million output tokens.
const inputUsdPerToken = 0.15 / 1e6
const outputUsdPerToken = 0.6 / 1e6

const near = (actual: number | null, expected: number, what: string) => {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${what}: ${actual} is not ${expected}`)
}

/**
 * A stored chat call to the fake OpenAI server, as every instrumentation must leave it: vendor,
 * the model asked for, the tokens the server reported, and a cost from the price table.
 */
export function assertPricedOpenAiChat(span: StoredLlmSpan | undefined, label: string, options: { responseModel?: string | null } = {}): void {
  assert.ok(span, `${label}: no LLM span stored`)
  const where = `${label} (${span.name})`
  assert.equal(span.llmVendor, 'openai', `${where}: vendor`)
  assert.equal(span.llmModel, 'gpt-4o-mini', `${where}: model`)
  if (options.responseModel !== undefined) assert.equal(span.llmResponseModel, options.responseModel, `${where}: response model`)
  assert.deepEqual([span.inputTokens, span.outputTokens, span.totalTokens], [fakeUsage.prompt_tokens, fakeUsage.completion_tokens, fakeUsage.total_tokens], `${where}: tokens`)
  assert.equal(span.costSource, 'price_table', `${where}: priced from the table`)
  near(span.inputCostUsd, fakeUsage.prompt_tokens * inputUsdPerToken, `${where}: input cost`)
  near(span.outputCostUsd, fakeUsage.completion_tokens * outputUsdPerToken, `${where}: output cost`)
  near(span.totalCostUsd, fakeUsage.prompt_tokens * inputUsdPerToken + fakeUsage.completion_tokens * outputUsdPerToken, `${where}: total cost`)
}

/**
 * A chat call whose tokens the instrumentation counted itself (from the text: some libraries'
 * streams), not the server's usage: present, adding up, and priced at the list price as stored.
 */
export function assertPricedCountedChat(span: StoredLlmSpan | undefined, label: string): void {
  assert.ok(span, `${label}: no LLM span stored`)
  const { inputTokens, outputTokens, totalTokens } = span
  assert.ok(inputTokens && outputTokens && totalTokens === inputTokens + outputTokens, `${label}: counted tokens ${inputTokens} + ${outputTokens} = ${totalTokens}`)
  assert.deepEqual([span.llmVendor, span.llmModel, span.llmResponseModel, span.costSource], ['openai', 'gpt-4o-mini', 'gpt-4o-mini-2024-07-18', 'price_table'], label)
  near(span.totalCostUsd, inputTokens * inputUsdPerToken + outputTokens * outputUsdPerToken, `${label}: total cost`)
}
