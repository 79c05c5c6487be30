import { attributeText, plainValue, type Attributes, type SpanEvent } from './any-value.ts'

// An LLM span's conversation, read from whichever convention its instrumentation wrote. Each
// reader below knows one convention; the first that finds the prompt gives the input messages and
// the first that finds the answer gives the output, since a span rarely mixes them but some
// instrumentations write the prompt one way and the completion another.

export interface ToolCall {
  name: string
  arguments: string
  id?: string
}

export interface ChatMessage {
  role: string
  content: string
  toolCalls: ToolCall[]
  /** input: sent to the model (prompt); output: what it answered. */
  direction: 'input' | 'output'
  /** A tool's or participant's name, where the convention gives one. */
  name?: string
  /** On a tool's result: the id of the call it answers. */
  toolCallId?: string
  /** On a tool's result: the name of the tool whose call (earlier in the conversation) has that id. */
  answers?: string
}

export interface Conversation {
  /** Which convention the messages were read from, e.g. "OpenTelemetry GenAI". */
  conventions: string[]
  messages: ChatMessage[]
}

interface SpanLike {
  attributes: Attributes
  events?: readonly SpanEvent[]
}

type Direction = ChatMessage['direction']

interface Reading {
  input: ChatMessage[]
  output: ChatMessage[]
}

interface Reader {
  convention: string
  read(span: SpanLike): Reading
}

const readers: Reader[] = [
  { convention: 'OpenTelemetry GenAI', read: readOtelGenAi },
  { convention: 'OpenLLMetry', read: readOpenLlmetry },
  { convention: 'OpenInference', read: readOpenInference },
  { convention: 'Langtrace', read: readLangtrace },
  { convention: 'Vercel AI SDK', read: readVercelAi },
  { convention: 'Langfuse', read: readLangfuse },
  { convention: 'GenAI events', read: readGenAiEvents },
]

/** The span's conversation, or null when it carries none in any convention known here. */
export function conversationOf(span: SpanLike): Conversation | null {
  let input: ChatMessage[] = []
  let output: ChatMessage[] = []
  const conventions: string[] = []
  for (const reader of readers) {
    if (input.length > 0 && output.length > 0) break
    const reading = reader.read(span)
    let used = false
    if (input.length === 0 && reading.input.length > 0) {
      input = reading.input
      used = true
    }
    if (output.length === 0 && reading.output.length > 0) {
      output = reading.output
      used = true
    }
    if (used) conventions.push(reader.convention)
  }
  if (input.length === 0 && output.length === 0) return null
  return { conventions, messages: linkToolResults([...input, ...output]) }
}

/**
 * Each tool result named after the call it answers: a result carries only the call's id
 * (OpenAI's tool_call_id, Anthropic's tool_use_id), the tool's name is on the call.
 */
function linkToolResults(messages: ChatMessage[]): ChatMessage[] {
  const calledTools = new Map<string, string>()
  for (const message of messages) for (const call of message.toolCalls) if (call.id !== undefined) calledTools.set(call.id, call.name)
  return messages.map((message) => {
    const tool = message.toolCallId === undefined ? undefined : calledTools.get(message.toolCallId)
    return tool === undefined ? message : { ...message, answers: tool }
  })
}

// ---- OpenTelemetry GenAI semantic conventions (current): JSON messages with typed parts --------

function readOtelGenAi({ attributes }: SpanLike): Reading {
  const input: ChatMessage[] = []
  const system = parseJson(attributeText(attributes, 'gen_ai.system_instructions'))
  if (system !== undefined) {
    const content = contentText(system)
    if (content !== '') input.push(message('system', content, [], 'input'))
  }
  input.push(...messagesFromJson(parseJson(attributeText(attributes, 'gen_ai.input.messages')), 'input'))
  const output = messagesFromJson(parseJson(attributeText(attributes, 'gen_ai.output.messages')), 'output')
  return { input, output }
}

// ---- OpenLLMetry (Traceloop): gen_ai.prompt.N.role / .content, gen_ai.completion.N.* ------------

function readOpenLlmetry({ attributes }: SpanLike): Reading {
  return { input: indexedMessages(attributes, 'gen_ai.prompt.', 'input'), output: indexedMessages(attributes, 'gen_ai.completion.', 'output') }
}

function indexedMessages(attributes: Attributes, prefix: string, direction: Direction): ChatMessage[] {
  const byIndex = groupByIndex(attributes, prefix)
  return byIndex.map((fields) => {
    const role = fields.get('role') ?? (direction === 'input' ? 'user' : 'assistant')
    const content = contentText(parseJsonIfStructured(fields.get('content') ?? ''))
    const toolCalls: ToolCall[] = []
    for (const [index, call] of groupNested(fields, 'tool_calls.')) {
      toolCalls[index] = { name: call.get('name') ?? '', arguments: call.get('arguments') ?? '', ...(call.get('id') ? { id: call.get('id') as string } : {}) }
    }
    const functionName = fields.get('function_call.name')
    if (functionName !== undefined) toolCalls.push({ name: functionName, arguments: fields.get('function_call.arguments') ?? '' })
    return message(role, content, toolCalls.filter(Boolean), direction, fields.get('name'), fields.get('tool_call_id'))
  })
}

// ---- OpenInference (Arize Phoenix): llm.input_messages.N.message.role / .content ---------------

function readOpenInference({ attributes }: SpanLike): Reading {
  return { input: openInferenceMessages(attributes, 'llm.input_messages.', 'input'), output: openInferenceMessages(attributes, 'llm.output_messages.', 'output') }
}

function openInferenceMessages(attributes: Attributes, prefix: string, direction: Direction): ChatMessage[] {
  return groupByIndex(attributes, prefix).map((fields) => {
    const role = fields.get('message.role') ?? (direction === 'input' ? 'user' : 'assistant')
    let content = fields.get('message.content') ?? ''
    if (content === '') {
      const parts = [...groupNested(fields, 'message.contents.')].map(([, part]) => part.get('message_content.text') ?? '')
      content = parts.filter((part) => part !== '').join('\n')
    }
    const toolCalls = [...groupNested(fields, 'message.tool_calls.')].map(([, call]) => ({
      name: call.get('tool_call.function.name') ?? '',
      arguments: call.get('tool_call.function.arguments') ?? '',
      ...(call.get('tool_call.id') ? { id: call.get('tool_call.id') as string } : {}),
    }))
    return message(role, content, toolCalls, direction, fields.get('message.name'), fields.get('message.tool_call_id'))
  })
}

// ---- Langtrace: llm.prompts / llm.completions (JSON text), and the older request/response pair --

function readLangtrace({ attributes }: SpanLike): Reading {
  const input = messagesFromJson(parseJson(attributeText(attributes, 'llm.prompts') ?? attributeText(attributes, 'llm.request.messages')), 'input')
  let output = messagesFromJson(parseJson(attributeText(attributes, 'llm.completions') ?? attributeText(attributes, 'llm.response.choices')), 'output')
  if (output.length === 0) output = anthropicToolUse(attributes)
  return { input, output }
}

/**
 * The Langtrace Python SDK records an Anthropic answer that calls a tool not as a completion but
 * as `gen_ai.request.tool_results`: the tool_use block, JSON-encoded twice. Only tool_use blocks
 * are read from it (other SDKs put the results sent to the model under similar names).
 */
function anthropicToolUse(attributes: Attributes): ChatMessage[] {
  let value = parseJson(attributeText(attributes, 'gen_ai.request.tool_results'))
  if (typeof value === 'string') value = parseJsonIfStructured(value)
  const blocks = (Array.isArray(value) ? value : [value]).filter((block) => isRecord(block) && block.type === 'tool_use') as Array<Record<string, unknown>>
  return blocks.length === 0 ? [] : [message('assistant', '', blocks.map(toolCallOf), 'output')]
}

// ---- Vercel AI SDK: ai.prompt.messages / ai.prompt, ai.response.text / ai.response.toolCalls ----

function readVercelAi({ attributes }: SpanLike): Reading {
  let input = messagesFromJson(parseJson(attributeText(attributes, 'ai.prompt.messages')), 'input')
  if (input.length === 0) {
    const prompt = parseJson(attributeText(attributes, 'ai.prompt'))
    if (isRecord(prompt)) {
      if (typeof prompt.system === 'string') input.push(message('system', prompt.system, [], 'input'))
      if (typeof prompt.prompt === 'string') input.push(message('user', prompt.prompt, [], 'input'))
      input.push(...messagesFromJson(prompt.messages, 'input'))
    } else if (typeof prompt === 'string') {
      input = [message('user', prompt, [], 'input')]
    }
  }
  const text = attributeText(attributes, 'ai.response.text')
  const toolCalls = toolCallsOf(parseJson(attributeText(attributes, 'ai.response.toolCalls')))
  const output = text !== undefined || toolCalls.length > 0 ? [message('assistant', text ?? '', toolCalls, 'output')] : []
  return { input, output }
}

// ---- Langfuse (@langfuse/otel): langfuse.observation.input / .output --------------------------------

/**
 * What the application gave Langfuse's SDK as an observation's input and output, a string kept as
 * it is and anything else written as JSON (its serializeValue): for a generation, usually the
 * messages sent and the message answered, tool calls and results included.
 */
function readLangfuse({ attributes }: SpanLike): Reading {
  const side = (key: string, direction: Direction) => messagesFromJson(parseJsonIfStructured(attributeText(attributes, key) ?? ''), direction)
  return { input: side('langfuse.observation.input', 'input'), output: side('langfuse.observation.output', 'output') }
}

// ---- Span events: gen_ai.{system,user,assistant,tool}.message, gen_ai.choice, gen_ai.content.* --

const eventRoles: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
}

function readGenAiEvents({ events }: SpanLike): Reading {
  const input: ChatMessage[] = []
  const output: ChatMessage[] = []
  for (const event of events ?? []) {
    const name = event.name ?? ''
    const attributes = event.attributes ?? {}
    const role = eventRoles[name]
    if (role !== undefined) {
      const body = parseJsonIfStructured(attributeText(attributes, 'content') ?? '')
      const record = isRecord(body) ? body : undefined
      input.push(message(role, contentText(record?.content ?? body), toolCallsOf(record?.tool_calls), 'input', undefined, attributeText(attributes, 'id')))
    } else if (name === 'gen_ai.choice') {
      const body = parseJsonIfStructured(attributeText(attributes, 'message') ?? attributeText(attributes, 'content') ?? '')
      const record = isRecord(body) ? body : undefined
      output.push(message(typeof record?.role === 'string' ? record.role : 'assistant', contentText(record?.content ?? body), toolCallsOf(record?.tool_calls), 'output'))
    } else if (name === 'gen_ai.content.prompt') {
      input.push(...messagesFromJson(parseJson(attributeText(attributes, 'gen_ai.prompt')), 'input'))
    } else if (name === 'gen_ai.content.completion') {
      output.push(...messagesFromJson(parseJson(attributeText(attributes, 'gen_ai.completion')), 'output'))
    }
  }
  return { input, output }
}

// ---- Shared readers of JSON messages ------------------------------------------------------------

/**
 * Messages from the JSON shapes instrumentations write: a list of {role, content} (content a
 * string or a list of parts), OpenAI choices ({message}), OTel parts ({type, content}), an
 * object holding `messages` or `choices`, or a bare string.
 */
export function messagesFromJson(value: unknown, direction: Direction): ChatMessage[] {
  if (value === undefined || value === null) return []
  if (typeof value === 'string') return value === '' ? [] : [message(direction === 'input' ? 'user' : 'assistant', value, [], direction)]
  if (Array.isArray(value)) return value.flatMap((item) => (Array.isArray(item) ? toolCallTurn(item, direction) : messageFromJson(item, direction)))
  if (isRecord(value)) {
    if (Array.isArray(value.messages)) return messagesFromJson(value.messages, direction)
    if (Array.isArray(value.choices)) return messagesFromJson(value.choices, direction)
    return messageFromJson(value, direction)
  }
  return []
}

function messageFromJson(item: unknown, direction: Direction): ChatMessage[] {
  if (typeof item === 'string') return messagesFromJson(item, direction)
  if (!isRecord(item)) return []
  // An OpenAI choice: {index, message: {role, content}, finish_reason}.
  if (isRecord(item.message)) return messageFromJson(item.message, direction)
  const role = typeof item.role === 'string' ? item.role : direction === 'input' ? 'user' : 'assistant'
  const parts = Array.isArray(item.parts) ? item.parts : Array.isArray(item.content) ? item.content : undefined
  const toolCalls = [...toolCallsOf(item.tool_calls), ...toolCallsOf(item.toolCalls), ...toolCallsOf(parts)]
  if (isRecord(item.function_call)) toolCalls.push(toolCallOf(item.function_call))
  const name = typeof item.name === 'string' ? item.name : undefined
  const callId = typeof item.tool_call_id === 'string' ? item.tool_call_id : parts?.map(answeredCallId).find((id) => id !== undefined)
  const answeredCalls = callsInContent(role, item.content)
  if (answeredCalls.length > 0) return [message(role, '', [...toolCalls, ...answeredCalls], direction, name, callId)]
  const content = parts !== undefined ? contentText(parts) : contentText(item.content ?? item.text ?? '')
  return [message(role, content, toolCalls, direction, name, callId)]
}

/**
 * The tool calls a model's answer carries in place of its text. Langtrace's SDKs write a choice
 * without text as {role, content: its tool_calls}: the TypeScript SDK as JSON text
 * (`JSON.stringify(message.tool_calls)`, or of `function_call`), the Python SDK as the list
 * itself (or the function_call object). Only the model's messages are read so: a user's or a
 * tool's JSON text stays text.
 */
function callsInContent(role: string, content: unknown): ToolCall[] {
  if (role !== 'assistant' && role !== 'model') return []
  // A list of calls in content itself is read as parts (toolCallsOf), so only text is parsed here.
  const value = typeof content === 'string' ? parseJsonIfStructured(content) : isRecord(content) ? content : undefined
  if (Array.isArray(value)) return value.length > 0 && value.every(isToolCall) ? value.map(toolCallOf) : []
  if (isRecord(value) && typeof value.name === 'string' && 'arguments' in value && Object.keys(value).every((key) => key === 'name' || key === 'arguments')) {
    return [toolCallOf(value)]
  }
  return []
}

/**
 * A list inside the list of messages: the Langtrace Python SDK writes a prompt's assistant message
 * that called tools as the bare list of its calls (the calls themselves, or their JSON text from
 * the async client). From a plain dict message it keeps only `{id: "", type: ""}` per call: the
 * call is still shown, unnamed, so the turn is not lost.
 */
function toolCallTurn(items: unknown[], direction: Direction): ChatMessage[] {
  const calls = items.map((item) => (typeof item === 'string' ? parseJsonIfStructured(item) : item)).filter(isRecord).map(toolCallOf)
  return calls.length === 0 ? [] : [message('assistant', '', calls, direction)]
}

/** The call a tool-result part answers: Anthropic's tool_result, OTel's tool_call_response, Vercel's tool-result. */
function answeredCallId(part: unknown): string | undefined {
  if (!isRecord(part)) return undefined
  const id = part.type === 'tool_result' ? part.tool_use_id : part.type === 'tool_call_response' ? part.id : part.type === 'tool-result' ? part.toolCallId : undefined
  return typeof id === 'string' ? id : undefined
}

/** Text of a message's content: a string, or the text of its parts (tool calls are shown apart). */
export function contentText(content: unknown): string {
  if (content === undefined || content === null) return ''
  if (typeof content === 'string') return content
  if (typeof content === 'number' || typeof content === 'boolean') return String(content)
  if (Array.isArray(content)) {
    return content
      .map((part) => partText(part))
      .filter((text) => text !== '')
      .join('\n')
  }
  if (isRecord(content)) {
    if (typeof content.text === 'string') return content.text
    if (typeof content.content === 'string') return content.content
  }
  return JSON.stringify(content, null, 2)
}

const toolCallPartTypes = new Set(['tool_call', 'tool_use', 'tool-call', 'function_call'])

function partText(part: unknown): string {
  if (typeof part === 'string') return part
  if (!isRecord(part)) return contentText(part)
  const type = typeof part.type === 'string' ? part.type : undefined
  if (type !== undefined && toolCallPartTypes.has(type)) return ''
  // An OpenAI tool call in a list of content (Langtrace's Python SDK): shown as a call.
  if (type === 'function' && isRecord(part.function)) return ''
  if (type === 'text' || type === 'input_text' || type === 'output_text') return String(part.text ?? part.content ?? '')
  if (type === 'tool_call_response' || type === 'tool_result' || type === 'tool-result') return contentText(part.response ?? part.content ?? part.result ?? '')
  if (type === 'image_url' || type === 'image' || type === 'blob' || type === 'uri') return `[${type}]`
  if (type === 'reasoning' || type === 'thinking') return ''
  return contentText(part.text ?? part.content ?? part)
}

function toolCallsOf(value: unknown): ToolCall[] {
  if (!Array.isArray(value)) return []
  return value.filter(isToolCall).map(toolCallOf)
}

/** OpenAI's {type: 'function', function}, OTel's {type: 'tool_call'}, Anthropic's tool_use, Vercel's {toolName, args}. */
function isToolCall(call: unknown): call is Record<string, unknown> {
  if (!isRecord(call)) return false
  if (typeof call.type === 'string') return toolCallPartTypes.has(call.type) || call.type === 'function'
  return 'function' in call || 'toolName' in call || ('name' in call && ('arguments' in call || 'args' in call || 'input' in call))
}

function toolCallOf(call: Record<string, unknown>): ToolCall {
  const fn = isRecord(call.function) ? call.function : call
  const name = String(fn.name ?? call.toolName ?? '')
  const rawArguments = fn.arguments ?? call.input ?? call.args ?? ''
  const id = call.id ?? call.toolCallId
  return { name, arguments: typeof rawArguments === 'string' ? rawArguments : JSON.stringify(rawArguments), ...(typeof id === 'string' && id !== '' ? { id } : {}) }
}

function message(role: string, content: string, toolCalls: ToolCall[], direction: Direction, name?: string, toolCallId?: string): ChatMessage {
  return { role, content, toolCalls, direction, ...(name ? { name } : {}), ...(toolCallId ? { toolCallId } : {}) }
}

// ---- Flattened attributes: prefix.N.field… grouped by N ------------------------------------------

/** For keys `prefix<N>.<field>`: the fields of each N, in N order (text values). */
function groupByIndex(attributes: Attributes, prefix: string): Array<Map<string, string>> {
  const groups = new Map<number, Map<string, string>>()
  for (const [key, value] of Object.entries(attributes)) {
    if (!key.startsWith(prefix)) continue
    const match = /^(\d+)\.(.+)$/.exec(key.slice(prefix.length))
    if (!match) continue
    const index = Number(match[1])
    let fields = groups.get(index)
    if (!fields) groups.set(index, (fields = new Map()))
    const plain = plainValue(value)
    fields.set(match[2] as string, typeof plain === 'string' ? plain : JSON.stringify(plain))
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, fields]) => fields)
}

/** Within one group's fields, `prefix<M>.<rest>` regrouped by M. */
function groupNested(fields: Map<string, string>, prefix: string): Map<number, Map<string, string>> {
  const nested = new Map<number, Map<string, string>>()
  for (const [field, value] of fields) {
    if (!field.startsWith(prefix)) continue
    const match = /^(\d+)\.(.+)$/.exec(field.slice(prefix.length))
    if (!match) continue
    const index = Number(match[1])
    let group = nested.get(index)
    if (!group) nested.set(index, (group = new Map()))
    group.set(match[2] as string, value)
  }
  return new Map([...nested.entries()].sort(([a], [b]) => a - b))
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** JSON only when it looks like a structure: a message that is just "42" stays text. */
export function parseJsonIfStructured(text: string): unknown {
  const trimmed = text.trimStart()
  return trimmed.startsWith('[') || trimmed.startsWith('{') ? parseJson(text) : text
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
