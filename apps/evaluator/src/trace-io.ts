import type { SpanDto } from '@tracewell/db'

// What the judge reads of a trace: its input and its output, from the spans' attributes in the
// conventions Tracewell stores (docs/semantic-conventions.md). The root span's own input and
// output (OpenInference's input.value, OpenLLMetry's traceloop.entity.*) win; else the first LLM
// call's prompt and the last LLM call's completion; else the root span's attributes.

/** Each side is cut to this many characters: a judge prompt must fit the judge's context. */
export const MAX_SIDE_CHARS = 20_000

const inputKeys = ['gen_ai.input.messages', 'llm.prompts', 'gen_ai.prompt', 'llm.request.messages', 'ai.prompt.messages', 'ai.prompt', 'input.value']
const outputKeys = ['gen_ai.output.messages', 'llm.completions', 'gen_ai.completion', 'llm.response.choices', 'ai.response.text', 'output.value']
const rootInputKeys = ['input.value', 'traceloop.entity.input']
const rootOutputKeys = ['output.value', 'traceloop.entity.output']

/** An attribute's value as text: a stored AnyValue ({stringValue}, {intValue}, …) or a plain value. */
function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value
  if (typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>)
    if (entries.length === 1) {
      const [kind, inner] = entries[0] as [string, unknown]
      if (kind === 'stringValue') return String(inner)
      if (kind === 'intValue' || kind === 'doubleValue' || kind === 'boolValue') return String(inner)
    }
  }
  return JSON.stringify(value)
}

function firstOf(attributes: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const text = textOf(attributes[key])
    if (text !== undefined && text !== '') return text
  }
  return undefined
}

/** Indexed messages (`gen_ai.prompt.0.role`, `.content`, …; `llm.input_messages.0.message.*`) as `role: content` lines. */
function indexedMessages(attributes: Record<string, unknown>, prefix: string, contentSuffix: string, roleSuffix: string): string | undefined {
  const lines: Array<[number, string]> = []
  const pattern = new RegExp(`^${prefix.replace(/\./g, '\\.')}\\.(\\d+)\\.${contentSuffix.replace(/\./g, '\\.')}$`)
  for (const key of Object.keys(attributes)) {
    const match = pattern.exec(key)
    if (match === null) continue
    const index = Number(match[1])
    const role = textOf(attributes[`${prefix}.${index}.${roleSuffix}`])
    lines.push([index, `${role ?? 'message'}: ${textOf(attributes[key]) ?? ''}`])
  }
  return lines.length === 0 ? undefined : lines.sort(([a], [b]) => a - b).map(([, line]) => line).join('\n')
}

const promptOf = (attributes: Record<string, unknown>) =>
  firstOf(attributes, inputKeys) ??
  indexedMessages(attributes, 'gen_ai.prompt', 'content', 'role') ??
  indexedMessages(attributes, 'llm.input_messages', 'message.content', 'message.role')

const completionOf = (attributes: Record<string, unknown>) =>
  firstOf(attributes, outputKeys) ??
  indexedMessages(attributes, 'gen_ai.completion', 'content', 'role') ??
  indexedMessages(attributes, 'llm.output_messages', 'message.content', 'message.role')

const cut = (text: string) => (text.length > MAX_SIDE_CHARS ? `${text.slice(0, MAX_SIDE_CHARS)}… (cut at ${MAX_SIDE_CHARS} characters)` : text)

/** Where an experiment's trace keeps its dataset item's expected output (the experiment worker writes it). */
export const expectedOutputKey = 'tracewell.dataset.item.expected_output'

/** The trace's input and output for the judge (spans in start order, as the repository reads them), and an experiment item's expected output. */
export function traceInputOutput(spans: readonly SpanDto[]): { input: string; output: string; expectedOutput?: string } {
  const root = spans.find((span) => span.parentSpanId === null) ?? spans[0]
  const llmCalls = spans.filter((span) => span.llmModel !== null || promptOf(span.attributes) !== undefined)
  const input = (root && firstOf(root.attributes, rootInputKeys)) ?? llmCalls.map((span) => promptOf(span.attributes)).find((text) => text !== undefined)
  const output =
    (root && firstOf(root.attributes, rootOutputKeys)) ?? llmCalls.map((span) => completionOf(span.attributes)).findLast((text) => text !== undefined)
  const expected = root && firstOf(root.attributes, [expectedOutputKey])
  return { input: cut(input ?? (root ? JSON.stringify(root.attributes) : '')), output: cut(output ?? ''), ...(expected === undefined ? {} : { expectedOutput: cut(expected) }) }
}
