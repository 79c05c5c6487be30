import { attributeText, type Attributes, type SpanEvent } from './any-value.ts'
import type { ChatMessage } from './conversation.ts'
import { llmCallOf, ownSidesOf } from './llm-call.ts'

// What an LLM judge reads of a trace, shared by the evaluator worker (which sends it) and the
// control plane's preview (which shows it): the trace's input and output, the template filled
// with them, and the reason a judge skips a trace that holds nothing to judge.
//
// The root span's own input and output (ownSidesOf: OpenInference's input.value, OpenLLMetry's
// traceloop.entity.*, Langfuse's trace input) win: they are what the application was asked and
// answered. Else the first LLM call's prompt and the last LLM call's answer, read by llmCallOf as
// the console reads them. Nothing else of a span (no other attribute, no session or user id): a
// trace without the side its template uses is not judged (docs/api.md#what-a-judge-is-sent).

/** Each side is cut to this many characters: a judge prompt must fit the judge's context. */
export const MAX_SIDE_CHARS = 20_000

/** Where an experiment's trace keeps its dataset item's expected output (the experiment worker writes it). */
export const expectedOutputKey = 'tracewell.dataset.item.expected_output'

/** A span as the judge reads it (a stored span has these and more). */
export interface JudgedSpan {
  parentSpanId: string | null
  attributes: Attributes
  events?: readonly SpanEvent[]
}

/** A trace's sides for a judge: null when the trace holds none (or only blank text). */
export interface JudgeInput {
  input: string | null
  output: string | null
  /** An experiment item's expected output, on an experiment's trace only. */
  expectedOutput?: string
}

/** Messages as `role: content` lines; a tool call as `role calls name(arguments)`. */
function messagesText(messages: readonly ChatMessage[]): string | undefined {
  const lines: string[] = []
  for (const message of messages) {
    if (message.content.trim() !== '') lines.push(`${message.role}: ${message.content}`)
    for (const call of message.toolCalls) lines.push(`${message.role} calls ${call.name}(${call.arguments})`)
  }
  return lines.length === 0 ? undefined : lines.join('\n')
}

const cut = (text: string) => (text.length > MAX_SIDE_CHARS ? `${text.slice(0, MAX_SIDE_CHARS)}… (cut at ${MAX_SIDE_CHARS} characters)` : text)

/** The trace's input and output for a judge (spans in start order, as the repository reads them), and an experiment item's expected output. */
export function judgeInputOf(spans: readonly JudgedSpan[]): JudgeInput {
  const root = spans.find((span) => span.parentSpanId === null) ?? spans[0]
  const own = root === undefined ? { input: undefined, output: undefined } : ownSidesOf(root)
  const conversations = spans.map((span) => llmCallOf(span)?.conversation?.messages ?? [])
  const sideOf = (messages: ChatMessage[], direction: ChatMessage['direction']) => messagesText(messages.filter((message) => message.direction === direction))
  const input = own.input ?? conversations.map((messages) => sideOf(messages, 'input')).find((text) => text !== undefined)
  const output = own.output ?? conversations.map((messages) => sideOf(messages, 'output')).findLast((text) => text !== undefined)
  const expectedText = root && attributeText(root.attributes, expectedOutputKey)
  const expected = expectedText === undefined || expectedText.trim() === '' ? undefined : expectedText
  return { input: input === undefined ? null : cut(input), output: output === undefined ? null : cut(output), ...(expected === undefined ? {} : { expectedOutput: cut(expected) }) }
}

const variablePattern = /\{\{\s*(input|output|expected_output)\s*\}\}/g

/** Which of {{input}} and {{output}} the template asks for. */
function sidesAskedFor(template: string): Set<'input' | 'output'> {
  const asked = new Set<'input' | 'output'>()
  for (const [, name] of template.matchAll(variablePattern)) if (name === 'input' || name === 'output') asked.add(name)
  return asked
}

/**
 * Why a judge would not judge this trace, or null when it would: a side the template asks for
 * ({{input}}, {{output}}) is missing; a template asking for neither is skipped only when the trace
 * has neither side (it judges the trace by other means, but a trace of nothing is not worth a call).
 */
export function judgeSkipReason(template: string, trace: JudgeInput): string | null {
  const asked = sidesAskedFor(template)
  const missing = [...asked].filter((side) => trace[side] === null)
  if (missing.length > 0) return `the trace has no ${missing.join(' and no ')} to judge (the template uses ${missing.map((side) => `{{${side}}}`).join(' and ')})`
  if (asked.size === 0 && trace.input === null && trace.output === null) return 'the trace has no input and no output to judge'
  return null
}

/** The template filled: `{{input}}`, `{{output}}` and `{{expected_output}}` (spaces inside the braces allowed; a missing side: empty); other text is left as written. */
export function fillJudgePrompt(template: string, trace: JudgeInput): string {
  return template.replace(variablePattern, (_match, name: 'input' | 'output' | 'expected_output') =>
    name === 'expected_output' ? (trace.expectedOutput ?? '') : (trace[name] ?? ''),
  )
}

/** What a judge is sent for a trace: its sides, and the filled template, or why it is skipped (no prompt). */
export type JudgeRequest = JudgeInput & ({ prompt: string; skipped: null } | { prompt: null; skipped: string })

/** The one path from a template and a trace's spans to what a judge is sent: the worker judges with it, the preview shows it. */
export function judgeRequestOf(template: string, spans: readonly JudgedSpan[]): JudgeRequest {
  const trace = judgeInputOf(spans)
  const skipped = judgeSkipReason(template, trace)
  return skipped === null ? { ...trace, prompt: fillJudgePrompt(template, trace), skipped } : { ...trace, prompt: null, skipped }
}
