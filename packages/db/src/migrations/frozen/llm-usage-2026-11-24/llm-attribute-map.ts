import { readCount, readId, readJsonCount, readText, readUsd, type AttributeValue } from './attribute-values.ts'
import { operationFromOpenInference, operationFromRequestType, operationFromVercel } from './operation-names.ts'
import { canonicalVendor } from './vendor-names.ts'

// THE table: which span attribute fills which derived LLM column, for every instrumentation we
// read, in precedence order. docs/semantic-conventions.md shows it (a test keeps the two equal).
//
// Precedence, within each column, top to bottom; the first attribute present with a usable value
// wins (a value of the wrong kind is skipped, not an error):
//  1. Langtrace's original `llm.*` names (the seed format, docs/api.md#send-traces), kept first so spans stored
//     before this table read the same;
//  2. the OpenTelemetry GenAI conventions as they are now (`gen_ai.provider.name`,
//     `gen_ai.usage.cache_read.input_tokens`, …), which OpenLLMetry, Langtrace and newer Vercel
//     AI SDK releases send;
//  3. the deprecated GenAI names still sent by older OpenLLMetry, Langtrace and the Vercel AI SDK's
//     provider-call spans (`gen_ai.system`, `gen_ai.usage.prompt_tokens`, OpenLLMetry's
//     `gen_ai.usage.cache_read_input_tokens`, …);
//  4. OpenInference (`llm.provider`, `llm.model_name`, `llm.token_count.*`);
//  5. the Vercel AI SDK's own `ai.*` names (its outer ai.generateText/ai.streamText spans carry only these);
//  6. the rest of Langtrace's names (`langtrace.service.name`, the legacy `llm.token.counts` JSON).
// A span carries one library's names in practice; the order matters only when two instrumentations
// write the same span, and then the more standard name wins.

export type Convention = 'Langtrace' | 'OTel GenAI' | 'OTel GenAI, deprecated' | 'OpenLLMetry' | 'OpenInference' | 'Vercel AI SDK' | 'OpenTelemetry'

export interface AttributeSource<T> {
  key: string
  /** Who sends it (for the documentation). */
  from: readonly Convention[]
  read(value: AttributeValue): T | null
  /** How the value is read, when it is not read as it is (for the documentation). */
  note?: string
}

const text = (key: string, from: Convention[]): AttributeSource<string> => ({ key, from, read: readText })
const id = (key: string, from: Convention[]): AttributeSource<string> => ({ key, from, read: readId })
const count = (key: string, from: Convention[]): AttributeSource<number> => ({ key, from, read: readCount })
const usd = (key: string, from: Convention[]): AttributeSource<number> => ({ key, from, read: readUsd })
const jsonCount = (key: string, field: string, from: Convention[]): AttributeSource<number> => ({
  key,
  from,
  read: (value) => readJsonCount(value, field),
  note: `the JSON string's \`${field}\``,
})
const translated = (key: string, from: Convention[], translate: (value: string) => string, note: string): AttributeSource<string> => ({
  key,
  from,
  read: (value) => {
    const reported = readText(value)
    return reported === null ? null : translate(reported)
  },
  note,
})
const vendor = (key: string, from: Convention[]): AttributeSource<string> => translated(key, from, canonicalVendor, 'canonical vendor name')

export const llmAttributeMap = {
  vendor: [
    vendor('llm.vendor', ['Langtrace']),
    vendor('gen_ai.provider.name', ['OTel GenAI', 'OpenLLMetry', 'Vercel AI SDK']),
    vendor('gen_ai.system', ['OTel GenAI, deprecated', 'OpenLLMetry', 'Langtrace', 'Vercel AI SDK']),
    // The hosting provider before the model family: Azure-hosted OpenAI models are priced by Azure.
    vendor('llm.provider', ['OpenInference']),
    vendor('llm.system', ['OpenInference']),
    vendor('ai.model.provider', ['Vercel AI SDK']),
    vendor('langtrace.service.name', ['Langtrace']),
  ],
  requestModel: [
    text('llm.request.model', ['Langtrace']),
    text('gen_ai.request.model', ['OTel GenAI', 'OpenLLMetry', 'Langtrace', 'Vercel AI SDK']),
    text('llm.request.model_name', ['OpenInference']),
    // OpenInference's one model name; its instrumentations overwrite it with the response's model.
    text('llm.model_name', ['OpenInference']),
    text('ai.model.id', ['Vercel AI SDK']),
    text('llm.model', ['Langtrace']),
  ],
  responseModel: [
    text('llm.response.model', ['Langtrace']),
    text('gen_ai.response.model', ['OTel GenAI', 'OpenLLMetry', 'Langtrace', 'Vercel AI SDK']),
    text('llm.response.model_name', ['OpenInference']),
    text('llm.model_name', ['OpenInference']),
    text('ai.response.model', ['Vercel AI SDK']),
  ],
  operation: [
    translated('llm.request.type', ['Langtrace', 'OpenLLMetry'], operationFromRequestType, 'translated'),
    text('gen_ai.operation.name', ['OTel GenAI', 'OpenLLMetry', 'Langtrace']),
    translated('gen_ai.request.type', ['Langtrace'], operationFromRequestType, 'translated'),
    translated('ai.operationId', ['Vercel AI SDK'], operationFromVercel, 'translated'),
    translated('openinference.span.kind', ['OpenInference'], operationFromOpenInference, 'translated'),
  ],
  inputTokens: [
    count('llm.usage.prompt_tokens', ['Langtrace']),
    count('gen_ai.usage.input_tokens', ['OTel GenAI', 'OpenLLMetry', 'Langtrace', 'Vercel AI SDK']),
    count('gen_ai.usage.prompt_tokens', ['OTel GenAI, deprecated', 'OpenLLMetry']),
    count('llm.token_count.prompt', ['OpenInference']),
    count('ai.usage.inputTokens', ['Vercel AI SDK']),
    count('ai.usage.promptTokens', ['Vercel AI SDK']),
    // Embedding calls (ai.embed, ai.embedMany) report one count.
    count('ai.usage.tokens', ['Vercel AI SDK']),
    jsonCount('llm.token.counts', 'input_tokens', ['Langtrace']),
  ],
  outputTokens: [
    count('llm.usage.completion_tokens', ['Langtrace']),
    count('gen_ai.usage.output_tokens', ['OTel GenAI', 'OpenLLMetry', 'Langtrace', 'Vercel AI SDK']),
    count('gen_ai.usage.completion_tokens', ['OTel GenAI, deprecated', 'OpenLLMetry']),
    count('llm.token_count.completion', ['OpenInference']),
    count('ai.usage.outputTokens', ['Vercel AI SDK']),
    count('ai.usage.completionTokens', ['Vercel AI SDK']),
    jsonCount('llm.token.counts', 'output_tokens', ['Langtrace']),
  ],
  totalTokens: [
    count('llm.usage.total_tokens', ['Langtrace', 'OpenLLMetry']),
    count('gen_ai.usage.total_tokens', ['OpenLLMetry', 'Langtrace']),
    count('llm.token_count.total', ['OpenInference']),
    count('ai.usage.totalTokens', ['Vercel AI SDK']),
    jsonCount('llm.token.counts', 'total_tokens', ['Langtrace']),
  ],
  cachedInputTokens: [
    count('gen_ai.usage.cache_read.input_tokens', ['OTel GenAI', 'OpenLLMetry', 'Vercel AI SDK']),
    count('gen_ai.usage.cache_read_input_tokens', ['OpenLLMetry']),
    count('gen_ai.usage.cached_tokens', ['Langtrace']),
    count('llm.token_count.prompt_details.cache_read', ['OpenInference']),
    count('llm.token_count.prompt_details.cache_input', ['OpenInference']),
    count('ai.usage.inputTokenDetails.cacheReadTokens', ['Vercel AI SDK']),
    count('ai.usage.cachedInputTokens', ['Vercel AI SDK']),
    jsonCount('llm.token.counts', 'cached_tokens', ['Langtrace']),
  ],
  cacheWriteInputTokens: [
    count('gen_ai.usage.cache_creation.input_tokens', ['OTel GenAI', 'OpenLLMetry', 'Vercel AI SDK']),
    count('gen_ai.usage.cache_creation_input_tokens', ['OpenLLMetry']),
    count('llm.token_count.prompt_details.cache_write', ['OpenInference']),
    count('ai.usage.inputTokenDetails.cacheWriteTokens', ['Vercel AI SDK']),
  ],
  reasoningTokens: [
    count('gen_ai.usage.reasoning.output_tokens', ['OTel GenAI']),
    count('gen_ai.usage.reasoning_tokens', ['OpenLLMetry']),
    count('llm.usage.reasoning_tokens', ['OpenLLMetry']),
    count('llm.token_count.completion_details.reasoning', ['OpenInference']),
    count('ai.usage.outputTokenDetails.reasoningTokens', ['Vercel AI SDK']),
    count('ai.usage.reasoningTokens', ['Vercel AI SDK']),
  ],
  sessionId: [
    id('session.id', ['OpenInference', 'Langtrace']),
    id('gen_ai.conversation.id', ['OTel GenAI', 'OpenLLMetry']),
    id('traceloop.association.properties.session_id', ['OpenLLMetry']),
    id('ai.telemetry.metadata.sessionId', ['Vercel AI SDK']),
    id('ai.telemetry.metadata.conversationId', ['Vercel AI SDK']),
  ],
  userId: [
    id('user.id', ['OpenTelemetry', 'OpenInference']),
    id('enduser.id', ['OpenTelemetry']),
    id('traceloop.association.properties.user_id', ['OpenLLMetry']),
    id('ai.telemetry.metadata.userId', ['Vercel AI SDK']),
    id('user_id', ['Langtrace']),
    // The end-user identifier passed to the provider (OpenAI's `user` parameter), as instrumented.
    id('gen_ai.user', ['Langtrace', 'OpenLLMetry']),
    id('llm.user', ['OpenLLMetry']),
  ],
  // What the caller says the call cost, in USD; when present it wins over every price table.
  inputCostUsd: [usd('gen_ai.usage.input_cost', ['OpenLLMetry']), usd('llm.cost.prompt', ['OpenInference'])],
  outputCostUsd: [usd('gen_ai.usage.output_cost', ['OpenLLMetry']), usd('llm.cost.completion', ['OpenInference'])],
  totalCostUsd: [usd('gen_ai.usage.cost', ['OpenLLMetry']), usd('llm.usage.cost', ['Langtrace']), usd('llm.cost.total', ['OpenInference'])],
} as const satisfies Record<string, ReadonlyArray<AttributeSource<string> | AttributeSource<number>>>

export type LlmColumn = keyof typeof llmAttributeMap
