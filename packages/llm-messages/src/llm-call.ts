import { attributeText, type Attributes, type SpanEvent } from './any-value.ts'
import { conversationOf, type Conversation } from './conversation.ts'

// A stored span's LLM call, read one way for every consumer: the console's span panel and session
// view, dataset items taken from spans, the judges and their preview. The model, vendor, tokens,
// cost and whether they are estimated were derived once, at ingest, by @tracewell/llm-usage from
// every convention's attribute names (docs/semantic-conventions.md) and are the span's columns;
// the messages, tool calls and tool results are read here, from attributes and events alike
// (conversationOf). What a span records as its own input and output, apart from any messages (an
// agent's or a chain's root), is read here too (ownSidesOf).

/** The stored span's fields an LLM call is read from (a StoredSpan has them all; the judge passes fewer). */
export interface LlmSpan {
  attributes: Attributes
  events?: readonly SpanEvent[]
  llmVendor?: string | null
  llmModel?: string | null
  llmResponseModel?: string | null
  llmRequestType?: string | null
  inputTokens?: number | null
  outputTokens?: number | null
  totalTokens?: number | null
  cachedInputTokens?: number | null
  cacheWriteInputTokens?: number | null
  reasoningTokens?: number | null
  tokensEstimated?: boolean
  inputCostUsd?: number | null
  outputCostUsd?: number | null
  totalCostUsd?: number | null
  costSource?: 'attribute' | 'custom_price' | 'price_table' | null
}

export interface LlmCall {
  vendor: string | null
  /** The model asked for (the answer's when none was), and the one that answered. */
  model: string | null
  responseModel: string | null
  /** The operation: chat, text_completion, embeddings, invoke_agent, … */
  requestType: string | null
  tokens: { input: number | null; output: number | null; total: number | null; cachedInput: number | null; cacheWrite: number | null; reasoning: number | null }
  cost: { input: number | null; output: number | null; total: number | null; source: LlmSpan['costSource'] }
  /** The token counts, and a cost computed from them, are estimates (docs/semantic-conventions.md#estimated-tokens). */
  estimated: boolean
  /** The messages sent and answered, tool calls and results included; null when none was recorded. */
  conversation: Conversation | null
}

const orNull = <T>(value: T | null | undefined): T | null => value ?? null

/** The span's LLM call, or null when the span is none: no model, vendor, token count or messages. */
export function llmCallOf(span: LlmSpan): LlmCall | null {
  const conversation = conversationOf(span)
  if (!span.llmModel && !span.llmVendor && span.inputTokens == null && conversation === null) return null
  return {
    vendor: orNull(span.llmVendor),
    model: orNull(span.llmModel),
    responseModel: orNull(span.llmResponseModel),
    requestType: orNull(span.llmRequestType),
    tokens: {
      input: orNull(span.inputTokens),
      output: orNull(span.outputTokens),
      total: orNull(span.totalTokens),
      cachedInput: orNull(span.cachedInputTokens),
      cacheWrite: orNull(span.cacheWriteInputTokens),
      reasoning: orNull(span.reasoningTokens),
    },
    cost: { input: orNull(span.inputCostUsd), output: orNull(span.outputCostUsd), total: orNull(span.totalCostUsd), source: orNull(span.costSource) },
    estimated: span.tokensEstimated === true,
    conversation,
  }
}

// A span's own input and output, as an application or a framework records them on its span
// whatever it calls: OpenInference's input.value, OpenLLMetry's entity input, Langfuse's trace
// input (updateTrace). The first of each list that holds text.
const ownInputKeys = ['input.value', 'traceloop.entity.input', 'langfuse.trace.input'] as const
const ownOutputKeys = ['output.value', 'traceloop.entity.output', 'langfuse.trace.output'] as const

/**
 * The span's own input and output as text (JSON where the instrumentation wrote JSON); undefined
 * when absent or blank. OpenInference writes an LLM span's whole request and response into
 * input.value / output.value, as JSON: where that span's messages can be read, they are its
 * sides, not those.
 */
export function ownSidesOf(span: Pick<LlmSpan, 'attributes' | 'events'>): { input: string | undefined; output: string | undefined } {
  const { attributes } = span
  if (attributeText(attributes, 'openinference.span.kind') === 'LLM' && conversationOf(span) !== null) return { input: undefined, output: undefined }
  const first = (keys: readonly string[]) => keys.map((key) => attributeText(attributes, key)).find((text) => text !== undefined && text.trim() !== '')
  return { input: first(ownInputKeys), output: first(ownOutputKeys) }
}
