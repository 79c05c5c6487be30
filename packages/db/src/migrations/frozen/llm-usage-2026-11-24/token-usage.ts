import type { LlmFields } from './derive-llm-fields.ts'

/**
 * The tokens of one call as the price tables count them: `input` includes the cache reads and
 * writes, `output` includes the reasoning tokens (the OTel GenAI convention: cache tokens "SHOULD
 * be included in gen_ai.usage.input_tokens", reasoning in output_tokens).
 */
export interface PricedTokens {
  input: number
  cacheRead: number
  cacheWrite: number
  output: number
  reasoning: number
}

type TokenFields = Pick<LlmFields, 'inputTokens' | 'outputTokens' | 'cachedInputTokens' | 'cacheWriteInputTokens' | 'reasoningTokens'>

/**
 * The span's tokens to price, or null when it reports neither input nor output tokens (not a call
 * that can be priced). Some clients report the provider's own counts, which for Anthropic leave
 * the cached tokens out of the input (and some leave reasoning out of the output): when the parts
 * exceed the whole, the whole is taken to exclude them and they are added to it.
 */
export function pricedTokens(fields: TokenFields): PricedTokens | null {
  if (fields.inputTokens === null && fields.outputTokens === null) return null
  const cacheRead = fields.cachedInputTokens ?? 0
  const cacheWrite = fields.cacheWriteInputTokens ?? 0
  const reasoning = fields.reasoningTokens ?? 0
  let input = fields.inputTokens ?? 0
  let output = fields.outputTokens ?? 0
  if (cacheRead + cacheWrite > input) input += cacheRead + cacheWrite
  if (reasoning > output) output += reasoning
  return { input, cacheRead, cacheWrite, output, reasoning }
}

/** USD per million tokens of each kind; a missing cache or reasoning rate is priced at its parent's. */
export interface TokenRates {
  input: number
  output: number
  cacheRead?: number | null | undefined
  cacheWrite?: number | null | undefined
  reasoning?: number | null | undefined
}

export interface Cost {
  inputCostUsd: number
  outputCostUsd: number
  totalCostUsd: number
}

/** The cost of `tokens` at `rates`, rounded to 1e-12 USD (float noise below that is not a price). */
export function costAtRates(tokens: PricedTokens, rates: TokenRates): Cost {
  const uncached = tokens.input - tokens.cacheRead - tokens.cacheWrite
  const inputCost =
    (uncached * rates.input + tokens.cacheRead * (rates.cacheRead ?? rates.input) + tokens.cacheWrite * (rates.cacheWrite ?? rates.input)) / 1e6
  const outputCost = ((tokens.output - tokens.reasoning) * rates.output + tokens.reasoning * (rates.reasoning ?? rates.output)) / 1e6
  return roundedCost(inputCost, outputCost, inputCost + outputCost)
}

export function roundUsd(usd: number): number {
  return Math.round(usd * 1e12) / 1e12
}

export function roundedCost(input: number, output: number, total: number): Cost {
  return { inputCostUsd: roundUsd(input), outputCostUsd: roundUsd(output), totalCostUsd: roundUsd(total) }
}
