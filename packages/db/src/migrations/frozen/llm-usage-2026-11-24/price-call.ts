import type { CallerCost, LlmFields } from './derive-llm-fields.ts'
import { emptyPriceBook, type CustomPriceBook } from './custom-prices.ts'
import { tablePrice } from './price-table.ts'
import { costAtRates, pricedTokens, roundUsd, type Cost } from './token-usage.ts'

/** Where a span's cost came from. */
export type CostSource = 'attribute' | 'custom_price' | 'price_table'

/** Why an LLM call got no cost: no price is known for its model, or it names no model. */
export type UnpricedReason = 'unknown_model' | 'no_model'

export interface SpanCost {
  inputCostUsd: number | null
  outputCostUsd: number | null
  totalCostUsd: number | null
  costSource: CostSource | null
}

export const noCost: Readonly<SpanCost> = Object.freeze({ inputCostUsd: null, outputCostUsd: null, totalCostUsd: null, costSource: null })

/** The caller's own cost, if it reported one: it wins over every price (docs/semantic-conventions.md). */
export function callerSpanCost(callerCost: CallerCost): SpanCost {
  const { inputCostUsd, outputCostUsd, totalCostUsd } = callerCost
  if (inputCostUsd === null && outputCostUsd === null && totalCostUsd === null) return noCost
  const round = (usd: number | null) => (usd === null ? null : roundUsd(usd))
  return { inputCostUsd: round(inputCostUsd), outputCostUsd: round(outputCostUsd), totalCostUsd: round(totalCostUsd), costSource: 'attribute' }
}

export type PricedCall = { cost: SpanCost; unpriced: null } | { cost: typeof noCost; unpriced: UnpricedReason | null }

/**
 * The cost of a span without a caller-reported cost: the project's own price for its model, else
 * the price table's, else none. A span reporting no tokens is not a priceable call (no cost, not
 * counted as unpriced); one with tokens but no known price has a null cost, never 0.
 */
export function priceCall(fields: LlmFields, startedAt: Date, prices: CustomPriceBook = emptyPriceBook): PricedCall {
  const tokens = pricedTokens(fields)
  if (tokens === null) return { cost: noCost, unpriced: null }
  const models = [fields.llmResponseModel, fields.llmModel].filter((model, i, all): model is string => model !== null && all.indexOf(model) === i)
  if (models.length === 0) return { cost: noCost, unpriced: 'no_model' }
  const custom = prices.size > 0 ? prices.priceFor(models, startedAt) : undefined
  if (custom !== undefined) return { cost: withSource(costAtRates(tokens, custom.rates), 'custom_price'), unpriced: null }
  for (const model of models) {
    const cost = tablePrice(model, fields.llmVendor, tokens, startedAt)
    if (cost !== null) return { cost: withSource(cost, 'price_table'), unpriced: null }
  }
  return { cost: noCost, unpriced: 'unknown_model' }
}

const withSource = (cost: Cost, costSource: CostSource): SpanCost => ({ ...cost, costSource })
