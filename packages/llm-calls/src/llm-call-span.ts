import { createHash } from 'node:crypto'
import type { SpanInsert } from '@tracewell/db'
import type { SpanCost } from '@tracewell/llm-usage'
import type { AnyValue, AttributeMap } from '@tracewell/span-schema'
import type { ChatAnswer, ChatRequestMessage } from './chat.client.ts'

// The trace of a call Tracewell makes itself (an experiment item, a playground run, a judge): one span,
// stored in the project like any other (the writer's summariser folds it into the trace list), in
// the OpenTelemetry GenAI conventions the console's chat view and the judges read, with the
// experiment's or playground's own attributes beside them (tracewell.*).

/** The service name of these traces, to find or leave them out in the trace list. */
export const selfServiceName = 'tracewell'

/** What made a call of Tracewell's own: its spans' `tracewell.origin`, by which lists and usage leave them out or show them. */
export type SelfCallOrigin = 'playground' | 'experiment' | 'judge'

/** The span attribute naming a self-made call's origin. */
export const selfCallOriginKey = 'tracewell.origin'

/** Ids derived from a name (an experiment result's id): a retried call after a crash stores its trace once. */
export function derivedIds(name: string): { traceId: string; spanId: string } {
  const hash = createHash('sha256').update(name).digest('hex')
  return { traceId: hash.slice(0, 32), spanId: hash.slice(32, 48) }
}

export interface LlmCallRecord {
  projectId: string
  traceId: string
  spanId: string
  origin: SelfCallOrigin
  /** The span's name, e.g. "experiment capitals-v2" or "playground". */
  name: string
  startedAtMs: number
  requestedModel: string
  messages: readonly ChatRequestMessage[]
  settings: Record<string, unknown>
  /** The answer; undefined when the call failed (error). */
  answer?: ChatAnswer
  error?: string
  cost: SpanCost
  /** The input and output as the judges read them (input.value, output.value). */
  inputText: string
  /** Extra attributes: tracewell.experiment.id, tracewell.dataset.item.id, … (strings and integers). */
  attributes: Record<string, string | number>
}

const text = (value: string): AnyValue => ({ stringValue: value })
const int = (value: number): AnyValue => ({ intValue: String(Math.trunc(value)) })

export function llmCallSpan(record: LlmCallRecord): SpanInsert {
  const { answer } = record
  const latencyMs = answer?.latencyMs ?? 0
  const startNs = BigInt(record.startedAtMs) * 1_000_000n
  const durationNs = BigInt(Math.max(latencyMs, 0)) * 1_000_000n
  const attributes: AttributeMap = {
    'gen_ai.operation.name': text('chat'),
    'gen_ai.system': text('openai'),
    'gen_ai.request.model': text(record.requestedModel),
    'gen_ai.input.messages': text(JSON.stringify(record.messages.map((message) => ({ role: message.role, parts: [{ type: 'text', content: message.content }] })))),
    'input.value': text(record.inputText),
  }
  for (const [key, value] of Object.entries(record.settings)) {
    if (typeof value === 'number') attributes[`gen_ai.request.${key}`] = { doubleValue: value }
    else if (typeof value === 'string') attributes[`gen_ai.request.${key}`] = text(value)
  }
  if (answer !== undefined) {
    const parts = [
      ...(answer.text === '' ? [] : [{ type: 'text', content: answer.text }]),
      ...answer.toolCalls.map((call) => ({ type: 'tool_call', name: call.name, arguments: call.arguments, ...(call.id === undefined ? {} : { id: call.id }) })),
    ]
    attributes['gen_ai.output.messages'] = text(JSON.stringify([{ role: 'assistant', parts, ...(answer.finishReason === null ? {} : { finish_reason: answer.finishReason }) }]))
    attributes['output.value'] = text(answer.text)
    attributes['gen_ai.response.model'] = text(answer.model)
    if (answer.inputTokens !== null) attributes['gen_ai.usage.input_tokens'] = int(answer.inputTokens)
    if (answer.outputTokens !== null) attributes['gen_ai.usage.output_tokens'] = int(answer.outputTokens)
    if (answer.firstTokenMs !== null) attributes['tracewell.time_to_first_token_ms'] = int(answer.firstTokenMs)
  }
  for (const [key, value] of Object.entries(record.attributes)) attributes[key] = typeof value === 'number' ? int(value) : text(value)
  attributes[selfCallOriginKey] = text(record.origin)
  const inputTokens = answer?.inputTokens ?? null
  const outputTokens = answer?.outputTokens ?? null
  return {
    projectId: record.projectId,
    traceId: record.traceId,
    spanId: record.spanId,
    parentSpanId: null,
    name: record.name,
    kind: 3,
    startTimeUnixNano: String(startNs),
    endTimeUnixNano: String(startNs + durationNs),
    durationNs: String(durationNs),
    traceState: null,
    statusCode: record.error === undefined ? 0 : 2,
    statusMessage: record.error ?? null,
    attributes,
    resourceAttributes: { 'service.name': text(selfServiceName) },
    events: [],
    links: [],
    serviceName: selfServiceName,
    serviceVersion: null,
    scopeName: 'tracewell',
    scopeVersion: null,
    llmVendor: 'openai',
    llmModel: record.requestedModel,
    llmResponseModel: answer?.model ?? null,
    llmRequestType: 'chat',
    inputTokens,
    outputTokens,
    totalTokens: inputTokens === null && outputTokens === null ? null : (inputTokens ?? 0) + (outputTokens ?? 0),
    cachedInputTokens: answer?.cachedInputTokens ?? null,
    cacheWriteInputTokens: null,
    reasoningTokens: answer?.reasoningTokens ?? null,
    sessionId: null,
    userId: null,
    inputCostUsd: record.cost.inputCostUsd,
    outputCostUsd: record.cost.outputCostUsd,
    totalCostUsd: record.cost.totalCostUsd,
    costSource: record.cost.costSource,
  }
}
