import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { callerSpanCost, CustomPriceBook, globProblem, globToRegExp, noCost, priceCall, type CustomModelPrice, type LlmFields } from '../src/index.ts'

const call = (overrides: Partial<LlmFields>): LlmFields => ({
  llmVendor: null, llmModel: null, llmResponseModel: null, llmRequestType: 'chat', inputTokens: 1_000_000, outputTokens: 100_000,
  totalTokens: null, cachedInputTokens: null, cacheWriteInputTokens: null, reasoningTokens: null, tokensEstimated: false, sessionId: null, userId: null, ...overrides,
})
const at = new Date('2026-11-20T12:00:00Z')
const price = (overrides: Partial<CustomModelPrice> & Pick<CustomModelPrice, 'model'>): CustomModelPrice => ({
  id: overrides.model, match: 'exact', effectiveFrom: null, rates: { input: 1, output: 2 }, ...overrides,
})

describe('the price table', () => {
  it('prices a call by its vendor’s list, cached input and reasoning as that vendor prices them', () => {
    // gpt-4o: $2.50/M input, $1.25/M cached input, $10/M output (reasoning included).
    assert.deepEqual(priceCall(call({ llmVendor: 'openai', llmModel: 'gpt-4o', cachedInputTokens: 400_000, reasoningTokens: 50_000 }), at), {
      cost: { inputCostUsd: 2, outputCostUsd: 1, totalCostUsd: 3, costSource: 'price_table' },
      unpriced: null,
    })
    // Azure lists the same model under its own prices.
    assert.equal(priceCall(call({ llmVendor: 'azure.ai.openai', llmModel: 'gpt-4o' }), at).cost.costSource, 'price_table')
  })

  it('prices the response’s model before the requested one', () => {
    const priced = priceCall(call({ llmModel: 'my-router', llmResponseModel: 'gpt-4o-mini-2024-07-18' }), at)
    assert.deepEqual(priced.cost, { inputCostUsd: 0.15, outputCostUsd: 0.06, totalCostUsd: 0.21, costSource: 'price_table' })
  })

  it('adds cached tokens to an input count that cannot include them (Anthropic’s own counts)', () => {
    // 10 uncached + 1000 cache reads: input as reported is 10, which cannot hold the 1000.
    const priced = priceCall(call({ llmVendor: 'anthropic', llmModel: 'claude-3-5-sonnet-20241022', inputTokens: 10, outputTokens: 0, cachedInputTokens: 1000 }), at)
    assert.deepEqual(priced.cost, { inputCostUsd: 0.00033, outputCostUsd: 0, totalCostUsd: 0.00033, costSource: 'price_table' })
  })

  it('gives an unknown model no cost (null, not 0), and says why', () => {
    assert.deepEqual(priceCall(call({ llmVendor: 'ollama', llmModel: 'llama3.2:3b' }), at), { cost: noCost, unpriced: 'unknown_model' })
    assert.deepEqual(priceCall(call({ llmModel: null }), at), { cost: noCost, unpriced: 'no_model' })
    // Part of the cost unknown: the cost is unknown, not the output's alone.
    assert.deepEqual(priceCall(call({ llmModel: 'gpt-4o', inputTokens: null, outputTokens: 20 }), at), { cost: noCost, unpriced: 'no_input_tokens' })
    // No output count (an embedding): priced on its input.
    assert.equal(priceCall(call({ llmModel: 'gpt-4o', inputTokens: 1_000_000, outputTokens: null }), at).cost.totalCostUsd, 2.5)
    // No tokens: not a call that could be priced, and not counted as unpriced.
    assert.deepEqual(priceCall(call({ llmModel: 'gpt-4o', inputTokens: null, outputTokens: null }), at), { cost: noCost, unpriced: null })
  })
})

describe('a project’s own prices', () => {
  it('win over the table, by exact name (case-insensitive) or glob', () => {
    const book = new CustomPriceBook([price({ model: 'GPT-4o', rates: { input: 1, output: 1 } }), price({ model: 'llama3*', match: 'glob', rates: { input: 0, output: 0 } })])
    assert.deepEqual(priceCall(call({ llmModel: 'gpt-4o' }), at, book).cost, { inputCostUsd: 1, outputCostUsd: 0.1, totalCostUsd: 1.1, costSource: 'custom_price' })
    // A local model priced 0 costs 0, not null.
    assert.deepEqual(priceCall(call({ llmVendor: 'ollama', llmModel: 'llama3.2:3b' }), at, book), {
      cost: { inputCostUsd: 0, outputCostUsd: 0, totalCostUsd: 0, costSource: 'custom_price' },
      unpriced: null,
    })
  })

  it('price cache reads, cache writes and reasoning at their own rates, or at their parent’s when unset', () => {
    const rates = { input: 10, output: 20, cacheRead: 1, cacheWrite: 12.5, reasoning: 30 }
    const book = new CustomPriceBook([price({ model: 'ft:gpt-4o:acme', rates }), price({ model: 'plain', rates: { input: 10, output: 20 } })])
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 500_000, cacheWriteInputTokens: 100_000, outputTokens: 100_000, reasoningTokens: 40_000 }
    // input: 400k × 10 + 500k × 1 + 100k × 12.5 = 4 + 0.5 + 1.25; output: 60k × 20 + 40k × 30 = 1.2 + 1.2.
    assert.deepEqual(priceCall(call({ llmModel: 'ft:gpt-4o:acme', ...usage }), at, book).cost, { inputCostUsd: 5.75, outputCostUsd: 2.4, totalCostUsd: 8.15, costSource: 'custom_price' })
    assert.deepEqual(priceCall(call({ llmModel: 'plain', ...usage }), at, book).cost, { inputCostUsd: 10, outputCostUsd: 2, totalCostUsd: 12, costSource: 'custom_price' })
  })

  it('apply from their effective date; the latest one in force wins', () => {
    const book = new CustomPriceBook([
      price({ model: 'mine', effectiveFrom: new Date('2026-11-01T00:00:00Z'), rates: { input: 2, output: 0 } }),
      price({ model: 'mine', effectiveFrom: new Date('2026-12-01T00:00:00Z'), rates: { input: 3, output: 0 } }),
      price({ model: 'mine', effectiveFrom: null, rates: { input: 1, output: 0 } }),
    ])
    const costOn = (day: string) => priceCall(call({ llmModel: 'mine' }), new Date(day), book).cost.inputCostUsd
    assert.deepEqual([costOn('2026-10-31T23:59:59Z'), costOn('2026-11-01T00:00:00Z'), costOn('2026-11-30T12:00:00Z'), costOn('2026-12-02T00:00:00Z')], [1, 2, 2, 3])
    const future = new CustomPriceBook([price({ model: 'gpt-4o', effectiveFrom: new Date('2027-01-01T00:00:00Z') })])
    assert.equal(priceCall(call({ llmModel: 'gpt-4o' }), at, future).cost.costSource, 'price_table')
  })

  it('prefer an exact name to a pattern, the response model to the request model, then the longer pattern', () => {
    const book = new CustomPriceBook([
      price({ model: '*', match: 'glob', rates: { input: 1, output: 0 } }),
      price({ model: 'acme-*', match: 'glob', rates: { input: 2, output: 0 } }),
      price({ model: 'acme-large', rates: { input: 3, output: 0 } }),
      price({ model: 'acme-router', rates: { input: 4, output: 0 } }),
    ])
    const inputCost = (llmModel: string, llmResponseModel: string | null = null) => priceCall(call({ llmModel, llmResponseModel }), at, book).cost.inputCostUsd
    assert.equal(inputCost('acme-large'), 3)
    assert.equal(inputCost('acme-small'), 2)
    assert.equal(inputCost('other'), 1)
    assert.equal(inputCost('acme-router', 'acme-large'), 3)
    assert.equal(inputCost('acme-small', 'acme-large'), 3)
  })
})

describe('glob patterns', () => {
  it('match the whole name, case-insensitively; * and ? are the only wildcards', () => {
    const glob = globToRegExp('meta-llama/Llama-3.?-*')
    assert.deepEqual(['meta-llama/llama-3.1-8b', 'META-LLAMA/LLAMA-3.2-', 'meta-llama/Llama-3x1-8b', 'x/meta-llama/Llama-3.1-8b'].map((name) => glob.test(name)), [true, true, false, false])
    assert.equal(globToRegExp('a+b(c)').test('a+b(c)'), true)
    assert.equal(globProblem('a*b*c'), null)
    assert.equal(globProblem('*a*b*c*d*e*f*g*h*'), 'at most 8 * wildcards')
  })
})

describe('a caller’s own cost', () => {
  it('is the span’s cost as given, rounded to 1e-12 USD; a total alone leaves input and output unknown', () => {
    assert.deepEqual(callerSpanCost({ inputCostUsd: 0.1, outputCostUsd: 0.2, totalCostUsd: 0.30000000000000004 }), { inputCostUsd: 0.1, outputCostUsd: 0.2, totalCostUsd: 0.3, costSource: 'attribute' })
    assert.deepEqual(callerSpanCost({ inputCostUsd: null, outputCostUsd: null, totalCostUsd: 0.5 }), { inputCostUsd: null, outputCostUsd: null, totalCostUsd: 0.5, costSource: 'attribute' })
    assert.equal(callerSpanCost({ inputCostUsd: null, outputCostUsd: null, totalCostUsd: null }), noCost)
  })
})
