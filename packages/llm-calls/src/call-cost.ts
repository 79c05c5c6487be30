import { listModelPrices, type Db } from '@tracewell/db'
import { CustomPriceBook, priceCall, type SpanCost } from '@tracewell/llm-usage'

// What a model call cost: the project's own price for the model, else the price table's (the
// writer prices the spans it stores the same way); no cost when neither knows the model.

export interface CallUsage {
  model: string
  inputTokens: number | null
  outputTokens: number | null
  cachedInputTokens: number | null
  reasoningTokens: number | null
}

export async function callCost(db: Db, projectId: string, usage: CallUsage, at = new Date()): Promise<SpanCost> {
  const prices = await listModelPrices(db, projectId)
  const book = new CustomPriceBook(
    prices.map((price) => ({
      id: price.id,
      model: price.model,
      match: price.match,
      effectiveFrom: price.effectiveFrom === null ? null : new Date(price.effectiveFrom),
      rates: price.usdPerMillionTokens,
    })),
  )
  const { cost } = priceCall(
    {
      llmVendor: null,
      llmModel: usage.model,
      llmResponseModel: usage.model,
      llmRequestType: 'chat',
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      totalTokens: null,
      cachedInputTokens: usage.cachedInputTokens,
      cacheWriteInputTokens: null,
      reasoningTokens: usage.reasoningTokens,
      // The call's own usage, as the model's API reported it.
      tokensEstimated: false,
      sessionId: null,
      userId: null,
    },
    at,
    book,
  )
  return cost
}
