// One vocabulary for the operation column: the values of the OpenTelemetry GenAI attribute
// `gen_ai.operation.name` (chat, text_completion, embeddings, invoke_agent, execute_tool, …).
// Libraries that name operations their own way are translated here; a value not listed is kept
// as sent, so nothing a client reports is lost.

/** OpenLLMetry's and Langtrace's `llm.request.type`. */
const REQUEST_TYPES: Readonly<Record<string, string>> = {
  chat: 'chat',
  chat_completion: 'chat',
  completion: 'text_completion',
  embedding: 'embeddings',
  embeddings: 'embeddings',
  rerank: 'rerank',
}

/**
 * The Vercel AI SDK's `ai.operationId`. The outer call (ai.generateText …) spans every step of a
 * multi-step call and reports their summed usage; each provider call is a doGenerate/doStream
 * child. The SDK's own OpenTelemetry integration names them invoke_agent and chat, and so do we.
 */
const VERCEL_OPERATIONS: Readonly<Record<string, string>> = {
  'ai.generateText': 'invoke_agent',
  'ai.streamText': 'invoke_agent',
  'ai.generateObject': 'invoke_agent',
  'ai.streamObject': 'invoke_agent',
  'ai.generateText.doGenerate': 'chat',
  'ai.streamText.doStream': 'chat',
  'ai.generateObject.doGenerate': 'chat',
  'ai.streamObject.doStream': 'chat',
  'ai.embed': 'embeddings',
  'ai.embedMany': 'embeddings',
  'ai.embed.doEmbed': 'embeddings',
  'ai.embedMany.doEmbed': 'embeddings',
  'ai.rerank': 'rerank',
  'ai.toolCall': 'execute_tool',
}

/** OpenInference's `openinference.span.kind` (upper case on the wire). */
const OPENINFERENCE_KINDS: Readonly<Record<string, string>> = {
  LLM: 'chat',
  EMBEDDING: 'embeddings',
  RERANKER: 'rerank',
  TOOL: 'execute_tool',
  AGENT: 'invoke_agent',
}

export const operationFromRequestType = (value: string): string => REQUEST_TYPES[value.toLowerCase()] ?? value
export const operationFromVercel = (value: string): string => VERCEL_OPERATIONS[value] ?? value
export const operationFromOpenInference = (value: string): string => OPENINFERENCE_KINDS[value.toUpperCase()] ?? value.toLowerCase()

/** The documented translations, for docs/semantic-conventions.md (checked by a test). */
export const operationTranslations = { 'llm.request.type': REQUEST_TYPES, 'ai.operationId': VERCEL_OPERATIONS, 'openinference.span.kind': OPENINFERENCE_KINDS }
