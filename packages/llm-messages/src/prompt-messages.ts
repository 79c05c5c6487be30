import { compileTemplate, fillTemplate } from './prompt-template.ts'

// A prompt version as the chat messages sent to a model, its variables filled from a dataset
// item's input (an experiment) or from what someone typed (the playground). A prompt whose value
// is a JSON list of {role, content} is a chat prompt (as Langfuse's chat prompts are), each
// message's content a template; any other value is one user message. Variables are filled in the
// parsed messages, so a value holding quotes or newlines cannot break the JSON.

export interface PromptMessage {
  role: 'system' | 'user' | 'assistant' | 'developer' | 'tool'
  content: string
}

const roles = new Set(['system', 'user', 'assistant', 'developer', 'tool'])

/** The value's messages when it is a chat prompt, else undefined. */
export function chatPromptMessages(value: string): PromptMessage[] | undefined {
  if (!value.trimStart().startsWith('[')) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined
  const messages: PromptMessage[] = []
  for (const item of parsed) {
    if (typeof item !== 'object' || item === null) return undefined
    const { role, content } = item as { role?: unknown; content?: unknown }
    if (typeof role !== 'string' || !roles.has(role) || typeof content !== 'string') return undefined
    messages.push({ role: role as PromptMessage['role'], content })
  }
  return messages
}

/** The prompt's messages with the declared variables filled from `values` (a missing one left empty: check `missingVariables` first). */
export function promptMessages(value: string, declaredVariables: readonly string[], values: ReadonlyMap<string, string>): PromptMessage[] {
  const fill = (text: string) => fillTemplate(compileTemplate(text, declaredVariables), values)
  const chat = chatPromptMessages(value)
  if (chat !== undefined) return chat.map((message) => ({ role: message.role, content: fill(message.content) }))
  return [{ role: 'user', content: fill(value) }]
}

/** A JSON value as a variable's text: a string as it is, anything else as JSON. */
export const variableText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value))

/**
 * A dataset item's input as variable values: an object's keys, each value as text. `input` is
 * also the whole input when the input has no key of that name (an input that is a string, or a
 * list of messages taken from a trace: then the text of its last user message).
 */
export function variablesOfInput(input: unknown): Map<string, string> {
  const values = new Map<string, string>()
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    for (const [key, value] of Object.entries(input)) if (value !== undefined && value !== null) values.set(key, variableText(value))
  }
  if (!values.has('input')) values.set('input', inputText(input))
  return values
}

/** The input as one text: a string, the last user message of a list of messages, else JSON. */
export function inputText(input: unknown): string {
  if (typeof input === 'string') return input
  if (Array.isArray(input)) {
    const lastUser = input.findLast((message) => typeof message === 'object' && message !== null && (message as { role?: unknown }).role === 'user') as { content?: unknown } | undefined
    if (lastUser !== undefined && typeof lastUser.content === 'string') return lastUser.content
  }
  return JSON.stringify(input)
}
