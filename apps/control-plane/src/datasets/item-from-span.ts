import { llmCallOf, ownSidesOf, parseJsonIfStructured, type ChatMessage } from '@tracewell/llm-messages'
import type { SpanDto } from '@tracewell/db'

// A dataset item taken from a trace or one of its spans, as Langfuse's "add to dataset" does: the
// LLM call's input messages become the item's input and its answer the expected output. The
// messages are read as the console's chat view and the judges read them (llmCallOf),
// so whatever convention the instrumentation wrote, the item holds plain {role, content} messages.

export interface ItemMessage {
  role: string
  content: string
  name?: string
  toolCalls?: Array<{ name: string; arguments: string; id?: string }>
}

export interface SpanItemFields {
  input: unknown
  expectedOutput: unknown
}

const itemMessage = (message: ChatMessage): ItemMessage => ({
  role: message.role,
  content: message.content,
  ...(message.name === undefined ? {} : { name: message.name }),
  ...(message.toolCalls.length === 0 ? {} : { toolCalls: message.toolCalls }),
})

/** A value written as text that may be JSON (OpenInference's input.value): parsed when it is a structure. */
const valueOf = (text: string | undefined): unknown => (text === undefined ? undefined : parseJsonIfStructured(text))

/** The span's messages: input (the prompt) and expected output (one answer's text, or the answer messages when there are tool calls or several). */
function fromConversation(span: SpanDto): SpanItemFields | undefined {
  const conversation = llmCallOf(span)?.conversation
  if (!conversation) return undefined
  const input = conversation.messages.filter((message) => message.direction === 'input').map(itemMessage)
  const output = conversation.messages.filter((message) => message.direction === 'output').map(itemMessage)
  if (input.length === 0) return undefined
  const [only] = output
  const expectedOutput = output.length === 0 ? null : output.length === 1 && only !== undefined && only.toolCalls === undefined ? only.content : output
  return { input, expectedOutput }
}

/** A span's own input and output where it records no LLM messages (an agent's or chain's root: OpenInference, OpenLLMetry, Langfuse). */
function fromSpanValues(span: SpanDto): SpanItemFields | undefined {
  const own = ownSidesOf(span)
  const input = valueOf(own.input)
  if (input === undefined) return undefined
  return { input, expectedOutput: valueOf(own.output) ?? null }
}

/**
 * The item's fields from the span (when spanId is given) or the trace: the trace's LLM call, the
 * root's if it is one, else the first in start order; else the root's recorded input and output.
 * Undefined when none records an input.
 */
export function itemFieldsOf(spans: readonly SpanDto[], spanId: string | null): SpanItemFields | undefined {
  if (spanId !== null) {
    const span = spans.find((candidate) => candidate.spanId === spanId)
    return span === undefined ? undefined : (fromConversation(span) ?? fromSpanValues(span))
  }
  const root = spans.find((span) => span.parentSpanId === null)
  const ordered = root === undefined ? spans : [root, ...spans.filter((span) => span !== root)]
  for (const span of ordered) {
    const fields = fromConversation(span)
    if (fields !== undefined) return fields
  }
  return root === undefined ? undefined : fromSpanValues(root)
}
